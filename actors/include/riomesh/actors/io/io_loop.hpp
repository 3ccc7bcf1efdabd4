// The I/O thread of a node: it owns every link (io/link.hpp) and drives
// them where the I/O is. One epoll waits on all their fds, a doorbell
// (eventfd) on their outboxes and on tasks posted from other threads. After
// anything moved it keeps polling for `polling_time` (rdma completion
// queues without a system call, everything else with one epoll_wait(0))
// before it sleeps, since the next completion is often microseconds away;
// where every link polls without a system call (rdma), up to
// `max_polling_time` while its traffic keeps coming back within that
// (io/spin_budget.hpp).
//
// Other fds (a listener) can be watched too: their callback runs on this
// thread once per readiness, until rearm(); it should only hand off.
#pragma once

#include <riomesh/actors/io/spin_budget.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace riomesh::actors {

class link;

class io_loop {
 public:
  using clock = std::chrono::steady_clock;

  // Starts the thread; throws std::system_error without epoll.
  explicit io_loop(std::chrono::nanoseconds polling_time = std::chrono::microseconds(10),
                   std::chrono::nanoseconds max_polling_time = std::chrono::nanoseconds::zero());
  // Stops and joins it.
  ~io_loop();
  // Stops the thread now (idempotent): links still there are dropped
  // without a word, what that wakes runs, then the at_stop work; nothing
  // the thread runs is called after, and the links and posted tasks are
  // let go.
  void stop();
  io_loop(const io_loop&) = delete;
  io_loop& operator=(const io_loop&) = delete;

  // ---- any thread ----------------------------------------------------------
  // Runs `task` on the I/O thread, before it next sleeps.
  void post(std::function<void()> task);
  // Takes `l` over: it starts its session setup on the I/O thread.
  void adopt(std::shared_ptr<link> l);
  // Work for the thread after each round over its links (the actors those
  // rounds woke: io_executor.hpp, connection_host.hpp); true if it did any.
  // And work for its last moment, after the last round.
  void after_each_round(std::function<bool()> work);
  void at_stop(std::function<void()> work);
  // The round work has something: the thread runs it before it sleeps (no
  // task to allocate, no lock to take).
  void nudge();
  // `l` has something to send (or released space to report).
  void wake(const std::shared_ptr<link>& l);
  bool on_io_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  std::thread::id thread_id() const { return thread_.get_id(); }

  // Calls `ready` (on the I/O thread) the next time `fd` is readable
  // (then rearm() for the time after), or, not `once`, every time it is
  // readable until unwatched (`ready` must take what makes it readable).
  // False if the fd cannot be watched.
  bool watch(int fd, std::function<void()> ready, bool once = true);
  bool rearm(int fd);
  // Stops watching; `ready` is not called after this returns. From any
  // thread, and on the I/O thread from inside another fd's callback too.
  void unwatch(int fd);
  std::size_t watched() const;

  // ---- the I/O thread --------------------------------------------------------
  // On the thread: `l` took a message from a handler this thread runs
  // (link::submit); it sends once that handler's turn ended (send_taken),
  // with whatever else the turn sent it.
  void send_after_turn(std::shared_ptr<link> l) { taken_by_.push_back(std::move(l)); }
  // What the messages links took so carried, since last asked.
  void took_bytes(std::size_t n) { turn_bytes_ += n; }
  std::size_t take_turn_bytes() { return std::exchange(turn_bytes_, 0); }
  // Sends what handlers' turns gave links; true if there was any.
  bool send_taken(clock::time_point now);

  // What the thread did, for tests and statistics.
  struct counters {
    std::uint64_t wakes = 0;       // returns from a sleeping epoll_wait
    std::uint64_t doorbells = 0;   // eventfd writes by other threads
    std::uint64_t busy_polls = 0;  // spins without sleeping
  };
  counters stats() const;
  std::size_t links() const;

 private:
  void run();
  bool run_tasks();
  bool serve_rung(clock::time_point now);
  // on_wake() for each of `links` still driven here; empties it. True if
  // anything moved.
  bool wake_each(std::vector<std::shared_ptr<link>>& links, clock::time_point now);
  bool poll_links(clock::time_point now);
  bool run_round_work();
  void finish();
  void run_timers(clock::time_point now, bool& moved);
  void reap();
  void add_link(std::shared_ptr<link> l);
  void ring();
  int sleep_ms(clock::time_point now) const;
  std::chrono::nanoseconds spin_length() const;

  spin_budget spin_;  // the I/O thread's own
  int epoll_fd_ = -1;
  int doorbell_ = -1;
  std::atomic<bool> stop_{false};
  // The thread is about to sleep, or sleeps: wakers must ring.
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> nudged_{false};

  mutable std::mutex lock_;  // tasks_, rung_
  // watches_: apart from lock_, which every actor that wakes a link takes,
  // so a watched fd's wake-up never waits for a preempted waker.
  mutable std::mutex watches_lock_;
  // Set (under lock_) when tasks_ or rung_ get one: a spin that finds them
  // clear takes no lock.
  std::atomic<bool> tasks_waiting_{false}, rung_waiting_{false};
  std::vector<std::function<void()>> tasks_;
  std::vector<std::shared_ptr<link>> rung_;
  std::vector<std::shared_ptr<link>> taken_by_, sending_;  // the thread's own
  std::size_t turn_bytes_ = 0;
  // The thread's own: rung_'s links being served. Swapped with rung_, so
  // both keep their storage and a ring allocates nothing.
  std::vector<std::shared_ptr<link>> serving_;
  struct watch_entry {
    std::function<void()> ready;
  };
  std::map<int, watch_entry> watches_;
  // Held while a watch callback runs, so unwatch() can wait it out.
  std::mutex dispatch_;

  // The I/O thread's own.
  std::map<int, std::shared_ptr<link>> links_;  // by wait fd
  std::map<int, bool> wants_write_;
  // Every link polls without a system call: a spin need not ask epoll
  // each time (only listeners and connection events would answer).
  bool all_cheap_ = true;
  clock::time_point epoll_looked_;
  std::vector<std::function<bool()>> round_work_;
  std::vector<std::function<void()>> stop_work_;
  std::atomic<std::size_t> link_count_{0};

  std::atomic<std::uint64_t> wakes_{0}, doorbells_{0}, busy_polls_{0};
  std::thread thread_;
};

}  // namespace riomesh::actors
