#include <riomesh/channels/verbs/memory_domain.hpp>

#include "cm_support.hpp"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/resource.h>

#include <cerrno>

namespace riomesh::channels::verbs {
namespace {

std::string kib(std::uint64_t n) {
  return std::to_string((n + 1023) / 1024) + " KiB";
}

}  // namespace

// The shared send cache registers for local access only: a key that no
// peer can use.
class memory_domain::device::send_fabric : public registrar {
 public:
  explicit send_fabric(device& d) : dev_(d) {}
  std::optional<registration> register_range(std::uintptr_t base, std::size_t length) override {
    std::string error;
    ibv_mr* mr =
        dev_.register_region(reinterpret_cast<void*>(base), length, IBV_ACCESS_LOCAL_WRITE, error);
    if (!mr)
      return std::nullopt;
    return registration{base, length, mr->lkey, 0, mr};
  }
  void deregister(const registration& r) override {
    dev_.deregister(static_cast<ibv_mr*>(r.handle));
  }

 private:
  device& dev_;
};

memory_domain::device::device(memory_domain& owner, ibv_context* ctx, ibv_pd* pd, bool windows)
    : owner_(owner),
      pd_(pd),
      windows_(windows),
      name_(ibv_get_device_name(ctx->device)),
      fabric_(std::make_unique<send_fabric>(*this)),
      ctx_(ctx) {
  sends_ = std::make_unique<shared_registrations>(*fabric_, owner.limits_.cache);
  // A device without the verb refuses before it looks at the descriptor;
  // one that has it fails on the bad descriptor instead.
  ibv_mr* probe = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);
  if (probe)
    ibv_dereg_mr(probe);
  else if (errno == EOPNOTSUPP || errno == EPROTONOSUPPORT || errno == ENOSYS)
    dmabuf_refusal_ = detail::sys_error(name_ + " cannot register dma-buf");
}

memory_domain::device::~device() {
  for (auto& q : cqs_)
    owner_.unwatch_queue(*q);
  cqs_.clear();
  sends_.reset();  // deregisters what it cached, before the domain goes
  ibv_dealloc_pd(pd_);
}

ibv_mr* memory_domain::device::register_region(void* base, std::size_t n, int access,
                                               std::string& error, int dmabuf) {
  if (!owner_.reserve(n, error))
    return nullptr;
  ibv_mr* mr = dmabuf >= 0 ? ibv_reg_dmabuf_mr(pd_, 0, n, reinterpret_cast<std::uint64_t>(base),
                                               dmabuf, access)
                           : ibv_reg_mr(pd_, base, n, access);
  if (!mr) {
    owner_.release(n);
    ++owner_.refused_;
    error = detail::sys_error(
        "device " + name_ + " cannot register " + kib(n) +
        (dmabuf >= 0 ? " of dma-buf" : " (is the memlock limit, ulimit -l, too low?)"));
    return nullptr;
  }
  ++owner_.registrations_;
  ++owner_.registered_;
  return mr;
}

shared_cq* memory_domain::device::completions(std::uint32_t room, std::string& error) {
  std::lock_guard<std::mutex> guard(cq_lock_);
  for (auto& q : cqs_)
    if (q->reserve(room))
      return q.get();
  auto q = shared_cq::open(ctx_, error);
  if (!q)
    return nullptr;
  if (!q->reserve(room)) {
    error = "a completion queue of " + name_ + " cannot hold " + std::to_string(room) + " entries";
    return nullptr;
  }
  owner_.watch_queue(*q);
  cqs_.push_back(std::move(q));
  return cqs_.back().get();
}

bool memory_domain::device::joined() {
  // Off unless configured: in the VM a spin over connections on a shared
  // queue cost as much as over queues of their own (an empty poll of rxe's
  // queue is as cheap as a look at an inbox), and one connection's round
  // trip p99 was 4 ms in 6 of 10 runs against 1 ms (docs/benchmarks.md).
  auto from = owner_.limits_.shared_cq_from;
  return ++connections_ >= from && from != 0;
}

void memory_domain::device::left(shared_cq* q) {
  std::lock_guard<std::mutex> guard(cq_lock_);
  for (std::size_t i = 1; i < cqs_.size(); ++i)
    if (cqs_[i].get() == q && q->idle()) {
      owner_.unwatch_queue(*q);
      cqs_.erase(cqs_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

void memory_domain::device::deregister(ibv_mr* mr) {
  if (!mr)
    return;
  std::size_t n = mr->length;
  ibv_dereg_mr(mr);
  --owner_.registered_;
  owner_.release(n);
}

memory_domain::memory_domain(const memory_limits& l) : limits_(l) {}

void memory_domain::watch_queues(queue_watch w) {
  // Every device's queues held still (no connection opens or closes one)
  // while they move from the old watch to the new.
  std::lock_guard<std::mutex> guard(lock_);
  std::vector<std::unique_lock<std::mutex>> held;
  for (auto& [ctx, d] : devices_)
    held.emplace_back(d->cq_lock_);
  std::lock_guard<std::mutex> watch_guard(watch_lock_);
  for (auto& [ctx, d] : devices_)
    for (auto& q : d->cqs_)
      unwatch_locked(*q);
  watch_ = std::move(w);
  for (auto& [ctx, d] : devices_)
    for (auto& q : d->cqs_)
      watch_locked(*q);
}

void memory_domain::watch_queue(shared_cq& q) {
  std::lock_guard<std::mutex> guard(watch_lock_);
  watch_locked(q);
}

void memory_domain::unwatch_queue(shared_cq& q) {
  std::lock_guard<std::mutex> guard(watch_lock_);
  unwatch_locked(q);
}

void memory_domain::watch_locked(shared_cq& q) {
  if (watch_.watch && watch_.watch(q.fd(), [&q] { q.on_signal(true); })) {
    q.stop_watching();
    return;
  }
  q.watch_alone();
}

void memory_domain::unwatch_locked(shared_cq& q) {
  if (watch_.unwatch)
    watch_.unwatch(q.fd());
  q.stop_watching();
}

memory_domain::~memory_domain() {
  std::lock_guard<std::mutex> guard(lock_);
  devices_.clear();
}

memory_domain::device* memory_domain::attach(ibv_context* ctx, std::string& error) {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = devices_.find(ctx);
  if (it != devices_.end())
    return it->second.get();
  ibv_device_attr_ex attr{};
  bool windows = ibv_query_device_ex(ctx, nullptr, &attr) == 0 &&
                 (attr.orig_attr.device_cap_flags &
                  (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0 &&
                 attr.orig_attr.max_mw > 0;
  ibv_pd* pd = ibv_alloc_pd(ctx);
  if (!pd) {
    error = detail::sys_error(std::string{"cannot allocate a protection domain on "} +
                              ibv_get_device_name(ctx->device));
    return nullptr;
  }
  auto d = std::unique_ptr<device>(new device(*this, ctx, pd, windows));
  return devices_.emplace(ctx, std::move(d)).first->second.get();
}

std::vector<memory_domain::device*> memory_domain::attach_all(std::string& error) {
  int n = 0;
  ibv_context** list = rdma_get_devices(&n);
  std::vector<device*> out;
  for (int i = 0; list && i < n; ++i) {
    device* d = attach(list[i], error);
    if (!d) {
      out.clear();
      break;
    }
    out.push_back(d);
  }
  if (list)
    rdma_free_devices(list);
  return out;
}

bool memory_domain::reserve(std::size_t n, std::string& error) {
  std::uint64_t now = pinned_ += n;
  rlimit lock{};
  bool over_config = limits_.max_pinned != 0 && now > limits_.max_pinned;
  bool over_rlimit = getrlimit(RLIMIT_MEMLOCK, &lock) == 0 && lock.rlim_cur != RLIM_INFINITY &&
                     now > lock.rlim_cur;
  if (over_config || over_rlimit) {
    pinned_ -= n;
    ++refused_;
    error = "registering " + kib(n) + " would pin " + kib(now) + " on this node, past " +
            (over_config ? "memory.max_pinned" : "RLIMIT_MEMLOCK (ulimit -l)") +
            " (memory.max_pinned: " +
            (limits_.max_pinned ? kib(limits_.max_pinned) : std::string{"unset"}) +
            ", RLIMIT_MEMLOCK: " +
            (lock.rlim_cur == RLIM_INFINITY ? std::string{"unlimited"} : kib(lock.rlim_cur)) + ")";
    return false;
  }
  auto peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  return true;
}

void memory_domain::release(std::size_t n) {
  pinned_ -= n;
}

std::size_t memory_domain::trim(std::chrono::nanoseconds idle) {
  auto before = registration_cache::clock::now() -
                std::chrono::duration_cast<registration_cache::clock::duration>(idle);
  std::lock_guard<std::mutex> guard(lock_);
  std::size_t n = 0;
  for (auto& [ctx, d] : devices_)
    n += d->sends_->trim(before);
  return n;
}

memory_domain::counters memory_domain::stats() const {
  counters c;
  c.registrations = registrations_;
  c.registered = registered_;
  c.pinned_bytes = pinned_;
  c.peak_pinned_bytes = peak_;
  c.refused = refused_;
  std::lock_guard<std::mutex> guard(lock_);
  c.devices = devices_.size();
  for (const auto& [ctx, d] : devices_) {
    auto s = d->sends_->stats();
    c.cache_hits += s.hits;
    c.cache_misses += s.misses;
    c.cache_evictions += s.evictions;
    c.cache_trimmed += s.trimmed;
    c.cache_entries += d->sends_->entries();
    c.cache_bytes += d->sends_->bytes();
    std::lock_guard<std::mutex> cq_guard(d->cq_lock_);
    for (const auto& cq : d->cqs_) {
      auto q = cq->stats();
      ++c.completion_queues;
      c.cq_queue_pairs += q.queue_pairs;
      c.cq_polls += q.polls;
      c.cq_strays += q.strays;
      c.cq_kicks += q.kicks;
    }
  }
  return c;
}

}  // namespace riomesh::channels::verbs
