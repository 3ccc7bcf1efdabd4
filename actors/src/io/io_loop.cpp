#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace riomesh::actors {
namespace {

constexpr int max_events = 64;
// How often a spin over links that all poll cheaply asks epoll anyway.
constexpr std::chrono::microseconds epoll_period{20};

}  // namespace

io_loop::io_loop(std::chrono::nanoseconds polling_time, std::chrono::nanoseconds max_polling_time)
    : spin_(polling_time, max_polling_time) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  doorbell_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || doorbell_ < 0)
    throw std::system_error(errno, std::generic_category(), "I/O thread: epoll or eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = doorbell_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, doorbell_, &ev);
  thread_ = std::thread([this] { run(); });
}

void io_loop::stop() {
  if (!thread_.joinable())
    return;
  stop_ = true;
  sleeping_ = true;
  ring();
  thread_.join();
  links_.clear();
  // The thread is gone: nothing sends what these links took any more, and
  // they go now with the others, not when the loop does.
  taken_by_.clear();
  sending_.clear();
  std::lock_guard<std::mutex> guard(lock_);
  tasks_.clear();
  rung_.clear();
}

io_loop::~io_loop() {
  stop();
  ::close(doorbell_);
  ::close(epoll_fd_);
}

void io_loop::ring() {
  // Only a thread that sleeps (or is about to) needs the system call.
  if (sleeping_.exchange(false)) {
    std::uint64_t one = 1;
    if (::write(doorbell_, &one, sizeof one) == sizeof one)
      ++doorbells_;
  }
}

void io_loop::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    tasks_.push_back(std::move(task));
    tasks_waiting_.store(true, std::memory_order_release);
  }
  ring();
}

void io_loop::adopt(std::shared_ptr<link> l) {
  post([this, l = std::move(l)]() mutable { add_link(std::move(l)); });
}

void io_loop::after_each_round(std::function<bool()> work) {
  post([this, work = std::move(work)]() mutable { round_work_.push_back(std::move(work)); });
}

void io_loop::at_stop(std::function<void()> work) {
  post([this, work = std::move(work)]() mutable { stop_work_.push_back(std::move(work)); });
}

bool io_loop::send_taken(clock::time_point now) {
  if (taken_by_.empty())
    return false;
  // Swapped: a send may take more (a failure's notice to a local handler).
  sending_.swap(taken_by_);
  wake_each(sending_, now);
  return true;
}

bool io_loop::wake_each(std::vector<std::shared_ptr<link>>& links, clock::time_point now) {
  bool moved = false;
  for (auto& l : links)
    if (!l->finished() && links_.count(l->wait_fd()))
      moved = l->on_wake(now) || moved;
  links.clear();
  return moved;
}

// Until none finds work (a few passes at most): an actor's reply wakes its
// connection, whose turn should not wait for the next round's system call.
bool io_loop::run_round_work() {
  bool any = false;
  for (int pass = 0; pass < 4; ++pass) {
    bool ran = false;
    for (auto& work : round_work_)
      ran = work() || ran;
    ran = (!taken_by_.empty() && send_taken(clock::now())) || ran;  // a clock read only if needed
    if (!ran)
      break;
    any = true;
  }
  return any;
}

// The thread's last moment: the links end, and what their ends wake (the
// connections' actors) runs before the thread is gone.
void io_loop::finish() {
  run_tasks();
  for (auto& [fd, l] : links_)
    l->drop("this node stopped");
  for (int i = 0; i < 16 && (run_tasks() || run_round_work()); ++i) {
  }
  for (auto& work : stop_work_)
    work();
}

void io_loop::nudge() {
  // Before the look at sleeping_: a thread going to sleep sees one or the
  // other.
  nudged_.store(true);
  ring();
}

void io_loop::wake(const std::shared_ptr<link>& l) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    rung_.push_back(l);
    rung_waiting_.store(true, std::memory_order_release);
  }
  ring();
}

bool io_loop::watch(int fd, std::function<void()> ready, bool once) {
  {
    std::lock_guard<std::mutex> guard(watches_lock_);
    watches_[fd] = {std::move(ready)};
  }
  epoll_event ev{};
  ev.events = EPOLLIN | (once ? std::uint32_t{EPOLLONESHOT} : 0u);
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0)
    return true;
  std::lock_guard<std::mutex> guard(watches_lock_);
  watches_.erase(fd);
  return false;
}

bool io_loop::rearm(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.fd = fd;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void io_loop::unwatch(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  // On this thread no callback runs but perhaps the caller's own (a
  // listener's, whose accept failed and closed a connection): waiting for
  // it would wait forever.
  std::unique_lock<std::mutex> dispatching(dispatch_, std::defer_lock);
  if (!on_io_thread())
    dispatching.lock();
  std::lock_guard<std::mutex> guard(watches_lock_);
  watches_.erase(fd);
}

std::size_t io_loop::watched() const {
  std::lock_guard<std::mutex> guard(watches_lock_);
  return watches_.size();
}

io_loop::counters io_loop::stats() const {
  return {wakes_.load(), doorbells_.load(), busy_polls_.load()};
}

std::size_t io_loop::links() const {
  return link_count_.load();
}

void io_loop::add_link(std::shared_ptr<link> l) {
  int fd = l->wait_fd();
  epoll_event ev{};
  ev.events = EPOLLIN | (l->wants_write() ? std::uint32_t{EPOLLOUT} : 0u);
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    l->drop("the I/O thread cannot watch the connection: " + std::string{std::strerror(errno)});
    return;
  }
  wants_write_[fd] = l->wants_write();
  all_cheap_ = all_cheap_ && l->cheap_polls();
  links_[fd] = l;
  ++link_count_;
  l->start(clock::now());
}

bool io_loop::run_tasks() {
  if (!tasks_waiting_.load(std::memory_order_acquire))
    return false;
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> guard(lock_);
    tasks.swap(tasks_);
    tasks_waiting_.store(false, std::memory_order_relaxed);
  }
  for (auto& t : tasks)
    t();
  return !tasks.empty();
}

bool io_loop::serve_rung(clock::time_point now) {
  if (!rung_waiting_.load(std::memory_order_acquire))
    return false;
  {
    std::lock_guard<std::mutex> guard(lock_);
    serving_.swap(rung_);
    rung_waiting_.store(false, std::memory_order_relaxed);
  }
  bool any = !serving_.empty();
  return wake_each(serving_, now) || any;
}

// The links whose channel can be looked at without a system call (rdma:
// the completion queue): every spin looks at each.
bool io_loop::poll_links(clock::time_point now) {
  bool moved = false;
  for (auto& [fd, l] : links_)
    if (l->cheap_polls())
      moved = l->poll(now) || moved;
  return moved;
}

void io_loop::run_timers(clock::time_point now, bool& moved) {
  for (auto& [fd, l] : links_)
    if (l->next_deadline() <= now) {
      l->on_timer(now);
      moved = true;
    }
}

// Links that ended leave the thread; the rest get their write interest
// updated (a tcp socket with bytes waiting to go out).
void io_loop::reap() {
  all_cheap_ = true;
  for (auto it = links_.begin(); it != links_.end();) {
    auto& [fd, l] = *it;
    if (l->finished()) {
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      wants_write_.erase(fd);
      --link_count_;
      it = links_.erase(it);
      continue;
    }
    bool want = l->wants_write();
    if (want != wants_write_[fd]) {
      epoll_event ev{};
      ev.events = EPOLLIN | (want ? std::uint32_t{EPOLLOUT} : 0u);
      ev.data.fd = fd;
      epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
      wants_write_[fd] = want;
    }
    all_cheap_ = all_cheap_ && l->cheap_polls();
    ++it;
  }
}

// The spin grows past polling_time only where a look costs no system call
// (every link rdma): over tcp each look is an epoll_wait, and on the host a
// longer spin took 30% more CPU per message and an eighth of the rate from
// the 1 MiB window (actor_bench --max-polling-us 50 against 1000).
std::chrono::nanoseconds io_loop::spin_length() const {
  return all_cheap_ ? spin_.spin() : spin_.least();
}

int io_loop::sleep_ms(clock::time_point now) const {
  auto next = clock::time_point::max();
  for (auto& [fd, l] : links_)
    next = std::min(next, l->next_deadline());
  if (next == clock::time_point::max())
    return 1000;
  if (next <= now)
    return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::min<long long>(ms, 1000));
}

void io_loop::run() {
  epoll_event ready[max_events];
  auto spin_until = clock::now();
  auto polite_from = spin_until;
  while (!stop_) {
    auto now = clock::now();
    bool moved = run_tasks();
    moved = serve_rung(now) || moved;
    int n = 0;
    if (!all_cheap_ || now - epoll_looked_ >= epoll_period) {
      n = epoll_wait(epoll_fd_, ready, max_events, 0);
      epoll_looked_ = now;
    }
    auto dispatch = [&](int count) {
      for (int i = 0; i < count; ++i) {
        int fd = ready[i].data.fd;
        if (fd == doorbell_) {
          std::uint64_t v;
          while (::read(doorbell_, &v, sizeof v) > 0) {
          }
          moved = true;
          continue;
        }
        if (auto l = links_.find(fd); l != links_.end()) {
          moved = l->second->on_io(now) || moved;
          continue;
        }
        std::lock_guard<std::mutex> dispatching(dispatch_);
        std::function<void()> callback;
        {
          std::lock_guard<std::mutex> guard(watches_lock_);
          auto w = watches_.find(fd);
          if (w == watches_.end())
            continue;
          callback = w->second.ready;
        }
        callback();
        moved = true;
      }
    };
    dispatch(n);
    moved = poll_links(now) || moved;
    run_timers(now, moved);
    reap();
    moved = nudged_.exchange(false) || moved;
    moved = run_round_work() || moved;
    if (moved) {
      spin_.moved(now);
      spin_until = now + spin_length();
      polite_from = now + spin_.least();
      continue;
    }
    spin_.went_quiet(now);
    if (now < spin_until) {
      ++busy_polls_;
      if (now >= polite_from)
        std::this_thread::yield();
      continue;
    }
    // To sleep: every channel signals its fd from here on, and nothing
    // posted or rung meanwhile is missed (wakers ring once we say so).
    bool took = false;
    for (auto& [fd, l] : links_)
      if (l->arm()) {
        took = true;
        // What a socket will not signal (TLS records read ahead) is served
        // here; what a completion queue held, by the cheap polls.
        if (!l->cheap_polls())
          l->on_io(now, true);
      }
    if (took)
      continue;  // arming took in what landed meanwhile: serve it first
    sleeping_ = true;
    {
      std::lock_guard<std::mutex> guard(lock_);
      if (!tasks_.empty() || !rung_.empty() || stop_ || nudged_.load()) {
        sleeping_ = false;
        continue;
      }
    }
    n = epoll_wait(epoll_fd_, ready, max_events, sleep_ms(clock::now()));
    sleeping_ = false;
    ++wakes_;
    now = clock::now();
    if (n > 0) {
      dispatch(n);
      reap();
      run_round_work();
      spin_.moved(now);
      spin_until = now + spin_length();
      polite_from = now + spin_.least();
    }
  }
  finish();
}

}  // namespace riomesh::actors
