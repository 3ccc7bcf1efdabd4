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
      fabric_(std::make_unique<send_fabric>(*this)) {
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

void memory_domain::device::deregister(ibv_mr* mr) {
  if (!mr)
    return;
  std::size_t n = mr->length;
  ibv_dereg_mr(mr);
  --owner_.registered_;
  owner_.release(n);
}

memory_domain::memory_domain(const memory_limits& l) : limits_(l) {}

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
  }
  return c;
}

}  // namespace riomesh::channels::verbs
