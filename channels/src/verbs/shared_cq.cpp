#include <riomesh/channels/verbs/shared_cq.hpp>

#include "cm_support.hpp"

#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

namespace riomesh::channels::verbs {
namespace {

// Made at its full size once: resizing a queue that other connections'
// completions are landing in, and that is armed, is what a driver is least
// tested at (rxe lost wake-ups under a connection flood).
constexpr int full_size = 1 << 16;

// An eventfd made readable (a kick, a stop); false only if its counter
// would overflow, which one write cannot make it do.
bool ring(int fd) {
  std::uint64_t one = 1;
  return ::write(fd, &one, sizeof one) == sizeof one;
}

// An eventfd made quiet again.
void quiet(int fd) {
  std::uint64_t v;
  while (::read(fd, &v, sizeof v) > 0) {
  }
}

}  // namespace

std::unique_ptr<shared_cq> shared_cq::open(ibv_context* ctx, std::string& error) {
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev) != 0) {
    error = detail::sys_error("cannot query the device for its completion queue size");
    return nullptr;
  }
  auto* ch = ibv_create_comp_channel(ctx);
  if (!ch) {
    error = detail::sys_error("cannot create a completion channel");
    return nullptr;
  }
  int size = std::min(full_size, dev.max_cqe);
  auto* cq = ibv_create_cq(ctx, size, nullptr, ch, 0);
  if (!cq) {
    error = detail::sys_error("cannot create a completion queue of " + std::to_string(size) +
                              " entries");
    ibv_destroy_comp_channel(ch);
    return nullptr;
  }
  int stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop < 0) {
    error = detail::sys_error("cannot create an eventfd for a completion queue's watcher");
    ibv_destroy_cq(cq);
    ibv_destroy_comp_channel(ch);
    return nullptr;
  }
  detail::set_nonblocking(ch->fd);
  auto out = std::unique_ptr<shared_cq>(new shared_cq(ch, cq, stop));
  out->size_ = cq->cqe;
  return out;
}

shared_cq::shared_cq(ibv_comp_channel* ch, ibv_cq* cq, int stop)
    : channel_(ch), cq_(cq), stop_(stop) {}

shared_cq::~shared_cq() {
  stop_watching();
  ::close(stop_);
  ibv_destroy_cq(cq_);
  ibv_destroy_comp_channel(channel_);
}

shared_cq::inbox::inbox() : kick_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

shared_cq::inbox::~inbox() {
  if (kick_ >= 0)
    ::close(kick_);
}

void shared_cq::inbox::take_kick() {
  quiet(kick_);
}

int shared_cq::fd() const {
  return channel_->fd;
}

void shared_cq::on_signal(bool by_progress_thread) {
  std::lock_guard<std::mutex> guard(lock_);
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(channel_, &cq, &context) == 0) {
    ibv_ack_cq_events(cq, 1);
    armed_ = false;
  }
  drain(nullptr, by_progress_thread);
  if (sleepers_.load() > 0)
    arm(nullptr, by_progress_thread);
}

void shared_cq::watch_alone() {
  if (watcher_.joinable())
    return;
  watcher_ = std::thread([this] {
    pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {stop_, POLLIN, 0}};
    for (;;) {
      if (::poll(fds, 2, -1) < 0)
        continue;  // EINTR
      if (fds[1].revents) {
        quiet(stop_);  // for a watcher started again later
        return;
      }
      if (fds[0].revents)
        on_signal(false);
    }
  });
}

void shared_cq::stop_watching() {
  if (!watcher_.joinable())
    return;
  ring(stop_);
  watcher_.join();
}

bool shared_cq::reserve(std::uint32_t entries) {
  std::lock_guard<std::mutex> guard(lock_);
  std::uint64_t need = held_ + entries;
  if (need > static_cast<std::uint64_t>(size_))
    return false;
  held_ = need;
  return true;
}

void shared_cq::unreserve(std::uint32_t entries) {
  std::lock_guard<std::mutex> guard(lock_);
  held_ -= std::min<std::uint64_t>(held_, entries);
}

shared_cq::inbox* shared_cq::attach(std::uint32_t qp_num) {
  auto box = std::make_unique<inbox>();
  if (box->kick_fd() < 0)
    return nullptr;
  std::lock_guard<std::mutex> guard(lock_);
  auto& slot = inboxes_[qp_num];
  slot = std::move(box);
  return slot.get();
}

void shared_cq::retire(std::uint32_t qp_num, std::uint32_t entries,
                       const std::function<void()>& destroy) {
  std::lock_guard<std::mutex> guard(lock_);
  if (auto it = inboxes_.find(qp_num); it != inboxes_.end()) {
    wake(*it->second);
    inboxes_.erase(it);
  }
  // Nothing can take the number between the destroy and the drain: making
  // a queue pair on this queue takes the lock too (reserve).
  destroy();
  drain(nullptr, false);
  held_ -= std::min<std::uint64_t>(held_, entries);
}

void shared_cq::drain(const inbox* caller, bool by_progress_thread) {
  ibv_wc wc[32];
  for (;;) {
    int n = ibv_poll_cq(cq_, 32, wc);
    ++polls_;
    if (n <= 0)
      return;
    for (int i = 0; i < n; ++i) {
      auto it = inboxes_.find(wc[i].qp_num);
      if (it == inboxes_.end()) {
        ++strays_;
        continue;
      }
      ++completions_;
      auto& box = *it->second;
      box.wcs.push_back(wc[i]);
      // Sequentially consistent with sleep(): either it sees the mail, or
      // this sees it sleeping and kicks. Not the caller, which looks at
      // its inbox next, nor a connection the progress thread polls after
      // the signal it is taking now.
      if (!box.mail.exchange(true) && box.sleeping.load() && &box != caller &&
          !(by_progress_thread && box.spun.load(std::memory_order_relaxed))) {
        if (ring(box.kick_))
          ++kicks_;
      }
    }
  }
}

bool shared_cq::collect(inbox& box, std::uint64_t& seen, bool force, std::vector<ibv_wc>& out) {
  // Polled by another connection since we looked: only our inbox to see,
  // and with nothing in it, no lock taken and the device not touched.
  bool poll = force || polls_.load(std::memory_order_relaxed) == seen;
  if (!poll) {
    seen = polls_.load(std::memory_order_relaxed);
    if (!box.mail.load(std::memory_order_acquire))
      return false;
  }
  std::lock_guard<std::mutex> guard(lock_);
  if (poll)
    drain(&box, false);
  seen = polls_.load(std::memory_order_relaxed);
  if (box.wcs.empty())
    return false;
  out.insert(out.end(), box.wcs.begin(), box.wcs.end());
  box.wcs.clear();
  box.mail.store(false, std::memory_order_relaxed);
  return true;
}

bool shared_cq::sleep(inbox& box) {
  if (!box.sleeping.exchange(true))
    sleepers_.fetch_add(1);
  if (box.mail.load())
    return true;
  std::lock_guard<std::mutex> guard(lock_);
  arm(&box, false);
  return box.mail.load();
}

void shared_cq::arm(const inbox* caller, bool by_progress_thread) {
  if (armed_)
    return;
  ibv_req_notify_cq(cq_, 0);
  armed_ = true;
  // What landed before the arming signals nothing.
  drain(caller, by_progress_thread);
}

bool shared_cq::idle() const {
  std::lock_guard<std::mutex> guard(lock_);
  return held_ == 0 && inboxes_.empty();
}

shared_cq::counters shared_cq::stats() const {
  std::lock_guard<std::mutex> guard(lock_);
  counters c;
  c.queue_pairs = inboxes_.size();
  c.polls = polls_.load();
  c.completions = completions_;
  c.strays = strays_;
  c.kicks = kicks_;
  c.entries = static_cast<std::uint64_t>(size_);
  return c;
}

}  // namespace riomesh::channels::verbs
