#include <riomesh/channels/memory/shared_registrations.hpp>

namespace riomesh::channels {

std::optional<registration> shared_registrations::keeper::register_range(std::uintptr_t base,
                                                                         std::size_t length) {
  auto r = fabric_.register_range(base, length);
  if (r)
    keep_[{r->base, r->lkey}] = next_keep;
  return r;
}

void shared_registrations::keeper::deregister(const registration& r) {
  fabric_.deregister(r);
  keep_.erase({r.base, r.lkey});  // the memory may go now
}

shared_registrations::shared_registrations(registrar& fabric, const registration_cache::limits& l)
    : keeper_(fabric), cache_(keeper_, l), gone_(invalidation_bus::global().subscribe()) {}

shared_registrations::~shared_registrations() = default;

void shared_registrations::take_invalidations() {
  for (const auto& [at, n] : gone_->take())
    cache_.invalidate(reinterpret_cast<const void*>(at), n);
}

std::optional<shared_registrations::pinned> shared_registrations::acquire(
    const void* p, std::size_t n, std::shared_ptr<const void> keep) {
  std::lock_guard<std::mutex> guard(lock_);
  take_invalidations();
  auto misses = cache_.stats().misses;
  keeper_.next_keep = std::move(keep);
  auto lease = cache_.acquire(p, n);
  keeper_.next_keep.reset();
  if (!lease)
    return std::nullopt;
  return pinned{lease->id, lease->reg, cache_.stats().misses != misses};
}

void shared_registrations::unpin(std::uint64_t id) {
  std::lock_guard<std::mutex> guard(lock_);
  cache_.unpin(id);
}

std::optional<registration> shared_registrations::covering(const void* p, std::size_t n) {
  std::lock_guard<std::mutex> guard(lock_);
  take_invalidations();
  if (const auto* r = cache_.covering(p, n))
    return *r;
  return std::nullopt;
}

std::size_t shared_registrations::trim(registration_cache::clock::time_point before) {
  std::lock_guard<std::mutex> guard(lock_);
  take_invalidations();
  return cache_.trim(before);
}

registration_cache::counters shared_registrations::stats() const {
  std::lock_guard<std::mutex> guard(lock_);
  return cache_.stats();
}

std::size_t shared_registrations::entries() const {
  std::lock_guard<std::mutex> guard(lock_);
  return cache_.entries();
}

std::uint64_t shared_registrations::bytes() const {
  std::lock_guard<std::mutex> guard(lock_);
  return cache_.bytes();
}

}  // namespace riomesh::channels
