// A completion queue for the connections a node has on one device, from
// the memory.shared_cq_from-th on: a spin over them polls the queue once,
// not a queue per connection. (On rxe that saves nothing: an empty poll
// there costs what the look at an inbox that replaces it does, so sharing
// is off by default; docs/benchmarks.md.)
//
// Completions are sorted by queue pair number into one inbox per
// connection, which takes its own. A spin's first connection polls the
// queue; the others see from the poll count that it has been polled since
// they last looked, and only take their inboxes.
//
// Sleeping: one waiter takes the queue's signal, not every connection. With
// the queue's completion channel in each connection's wait set, every
// signal would wake all of them (a thundering herd that stalled the rdma
// flood test; EPOLLEXCLUSIVE does not help once wait sets are nested, as
// the I/O thread's are). The node's progress thread watches fd() and calls
// on_signal(); without one (channels driven by their own threads) the
// queue has a thread of its own for it (watch_alone()), at the price of a
// thread switch per wake-up. A connection about to sleep says so
// (sleep()); on_signal() sorts what arrived and kicks the eventfd in the
// wait set of each sleeping connection that got mail and that the
// progress thread does not poll after the signal anyway (inbox::spun). The
// queue is armed only while a connection sleeps, so a busy node takes no
// signals.
//
// A queue pair's number can be given to a new queue pair once the old one
// is destroyed, while the old one's flushed completions still wait in the
// queue: retire() destroys it and empties the queue in one step, so none
// of them can reach the newcomer.
//
// The queue is made at the device's largest size (at most 65536 entries)
// and takes queue pairs while it can hold every request they can have
// posted at once; one that does not fit is refused, and the device opens
// another shared queue for it (memory_domain::device::completions): rxe's
// 32767 entries hold about 40 connections of the default queue sizes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

struct ibv_context;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_wc;

namespace riomesh::channels::verbs {

class shared_cq {
 public:
  // One queue pair's completions, until it takes them.
  struct inbox {
    inbox();
    ~inbox();
    inbox(const inbox&) = delete;
    inbox& operator=(const inbox&) = delete;
    // An eventfd, readable once mail came while the owner slept: the
    // owner's wait set holds it.
    int kick_fd() const { return kick_; }
    // Clears the kick (after a wake-up).
    void take_kick();

    std::atomic<bool> mail{false};
    std::atomic<bool> sleeping{false};
    // Driven by the progress thread that watches the queue.
    std::atomic<bool> spun{false};
    std::vector<ibv_wc> wcs;  // under the queue's lock
    int kick_ = -1;
  };

  struct counters {
    std::uint64_t queue_pairs = 0;  // attached now
    std::uint64_t polls = 0;        // of the queue, by every connection
    std::uint64_t completions = 0;  // sorted into inboxes
    std::uint64_t strays = 0;       // for no attached queue pair (a retired one's)
    std::uint64_t entries = 0;      // the queue's size now
    std::uint64_t kicks = 0;        // of sleeping connections, by the watcher
  };

  // Null with `error` set.
  static std::unique_ptr<shared_cq> open(ibv_context* ctx, std::string& error);
  ~shared_cq();
  shared_cq(const shared_cq&) = delete;
  shared_cq& operator=(const shared_cq&) = delete;

  ibv_cq* cq() const { return cq_; }
  // The completion channel's descriptor (non-blocking): readable once the
  // armed queue has something; then call on_signal().
  int fd() const;
  // Takes the signal, sorts what the queue holds, kicks sleepers that got
  // mail, and re-arms while anyone sleeps. The progress thread that
  // watches fd() says so: it polls the connections it drives after the
  // signal anyway, so those (inbox::spun) are not kicked.
  void on_signal(bool by_progress_thread);
  // Watches fd() from a thread of its own, until stop_watching() (or the
  // queue goes).
  void watch_alone();
  void stop_watching();

  // Room for `entries` more completions (a queue pair's send and receive
  // queues), before that queue pair is made; false if the queue cannot
  // hold them too.
  bool reserve(std::uint32_t entries);
  void unreserve(std::uint32_t entries);
  // The queue pair now made with the reserved room: its completions go to
  // the inbox returned (valid until retire()).
  inbox* attach(std::uint32_t qp_num);
  // Destroys the queue pair (`destroy`) and takes everything the queue
  // holds; what was that queue pair's is dropped. Gives its room back.
  void retire(std::uint32_t qp_num, std::uint32_t entries, const std::function<void()>& destroy);

  // The inbox's completions into `out` (appended). Polls the queue first
  // if `force`, or if nobody has since `seen` (the poll count this caller
  // saw last, updated). True if `out` got any.
  bool collect(inbox& box, std::uint64_t& seen, bool force, std::vector<ibv_wc>& out);
  // The inbox's owner is about to sleep on its kick descriptor: the queue
  // is armed, and the owner kicked when mail comes. True if mail is there
  // already (then take it instead of sleeping).
  bool sleep(inbox& box);
  // The owner is awake (it looks at its inbox by itself now).
  void wake(inbox& box) {
    if (box.sleeping.load(std::memory_order_relaxed) && box.sleeping.exchange(false))
      sleepers_.fetch_sub(1);
  }

  counters stats() const;
  // No queue pair on it, no room reserved.
  bool idle() const;

 private:
  shared_cq(ibv_comp_channel* ch, ibv_cq* cq, int stop);
  // Everything the queue holds, into the inboxes, kicking sleepers that
  // got mail but the caller's own (lock_ held).
  void drain(const inbox* caller, bool by_progress_thread);
  // Asks for a signal on the next completion, unless asked already, and
  // drains what came before (lock_ held).
  void arm(const inbox* caller, bool by_progress_thread);

  ibv_comp_channel* channel_;
  ibv_cq* cq_;
  mutable std::mutex lock_;
  int size_ = 0;            // the queue's entries
  std::uint64_t held_ = 0;  // reserved by queue pairs
  bool armed_ = false;
  std::unordered_map<std::uint32_t, std::unique_ptr<inbox>> inboxes_;
  std::atomic<std::uint64_t> polls_{0};
  std::atomic<int> sleepers_{0};
  std::uint64_t completions_ = 0, strays_ = 0, kicks_ = 0;
  int stop_;             // an eventfd: the watcher thread ends
  std::thread watcher_;  // only while no progress thread watches
};

}  // namespace riomesh::channels::verbs
