#include <riomesh/actors/connection/send_registrations.hpp>

namespace riomesh::actors {

std::optional<registration> send_registrations::fabric::register_range(std::uintptr_t base,
                                                                       std::size_t length) {
  if (!ch_.register_memory(reinterpret_cast<const void*>(base), length))
    return std::nullopt;
  keep_[base] = std::move(next_keep);
  return registration{base, length, 0, 0, nullptr};
}

void send_registrations::fabric::deregister(const registration& r) {
  ch_.deregister_memory(reinterpret_cast<const void*>(r.base));
  keep_.erase(r.base);  // the block's memory may go now
}

send_registrations::send_registrations(channels::channel& ch, const registration_cache::limits& l)
    : ch_(ch), fabric_(ch), cache_(fabric_, l), gone_(invalidation_bus::global().subscribe()) {}

send_registrations::~send_registrations() = default;

std::optional<std::uint64_t> send_registrations::pin(const buffer& b) {
  if (!ch_.registers_memory() || b.empty())
    return std::nullopt;
  for (const auto& [at, n] : gone_->take())
    cache_.invalidate(reinterpret_cast<const void*>(at), n);
  const auto* home = b.home_block();
  std::optional<registration_cache::lease> lease;
  if (home) {
    fabric_.next_keep = home->keep;
    lease = cache_.acquire(home->base, home->length);
    fabric_.next_keep.reset();
  } else if (b.where() == buffer::origin::user) {
    lease = cache_.acquire(b.data(), b.size());
  }
  if (!lease) {
    ++per_write_;
    return std::nullopt;
  }
  return lease->id;
}

void send_registrations::unpin(std::uint64_t lease) {
  cache_.unpin(lease);
}

send_registrations::counters send_registrations::stats() const {
  const auto& c = cache_.stats();
  return counters{c.registrations, c.hits, per_write_};
}

}  // namespace riomesh::actors
