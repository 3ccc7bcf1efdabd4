#include <riomesh/channels/memory/registration_cache.hpp>

#include <algorithm>
#include <iterator>
#include <vector>

namespace riomesh::channels {

registration_cache::registration_cache(registrar& fabric, const limits& l)
    : fabric_(fabric), limits_(l) {
  if (limits_.page == 0)
    limits_.page = 1;
}

registration_cache::~registration_cache() {
  for (auto& [id, e] : entries_)
    fabric_.deregister(e.reg);
}

template <class F>
void registration_cache::for_overlapping(std::uintptr_t lo, std::uintptr_t hi, F&& f) {
  auto it = live_.upper_bound(lo);
  if (it != live_.begin())
    --it;
  std::vector<std::uint64_t> found;
  for (; it != live_.end() && it->first < hi; ++it) {
    const auto& r = entries_.at(it->second).reg;
    if (r.base + r.length > lo)
      found.push_back(it->second);
  }
  for (auto id : found)
    f(id);
}

std::optional<registration_cache::lease> registration_cache::acquire(const void* p, std::size_t n) {
  if (n == 0)
    return std::nullopt;
  auto at = reinterpret_cast<std::uintptr_t>(p);
  auto it = live_.upper_bound(at);
  if (it != live_.begin()) {
    auto& e = entries_.at(std::prev(it)->second);
    if (e.reg.covers(at, n)) {
      ++stats_.hits;
      ++e.pins;
      e.used = clock::now();
      lru_.splice(lru_.begin(), lru_, e.lru);
      return lease{std::prev(it)->second, e.reg};
    }
  }
  ++stats_.misses;
  // Page-aligned, and grown over the live ranges it overlaps, which it
  // replaces: live ranges stay disjoint, so one lookup finds a cover.
  std::uintptr_t lo = 0, hi = 0;
  std::vector<std::uint64_t> overlapped;
  auto cover = [&] {
    lo = at / limits_.page * limits_.page;
    hi = (at + n + limits_.page - 1) / limits_.page * limits_.page;
    overlapped.clear();
    for_overlapping(lo, hi, [&](std::uint64_t id) {
      const auto& r = entries_.at(id).reg;
      lo = std::min(lo, r.base);
      hi = std::max(hi, r.base + r.length);
      overlapped.push_back(id);
    });
  };
  cover();
  auto reg = fabric_.register_range(lo, hi - lo);
  if (!reg && std::any_of(entries_.begin(), entries_.end(),
                          [](const auto& e) { return !e.second.retired && e.second.pins == 0; })) {
    // The bound on pinned memory, most likely: what nothing uses goes
    // first, the overlapped included, and the cover shrinks with it.
    evict_unpinned();
    cover();
    reg = fabric_.register_range(lo, hi - lo);
  }
  if (!reg) {
    ++stats_.failures;
    return std::nullopt;
  }
  ++stats_.registrations;
  for (auto id : overlapped)
    retire(id);
  std::uint64_t id = next_id_++;
  lru_.push_front(id);
  entries_[id] = entry{*reg, 1, false, lru_.begin(), clock::now()};
  live_[reg->base] = id;
  bytes_ += reg->length;
  evict_past_limits();
  return lease{id, *reg};
}

const registration* registration_cache::covering(const void* p, std::size_t n) const {
  auto at = reinterpret_cast<std::uintptr_t>(p);
  auto it = live_.upper_bound(at);
  if (it == live_.begin())
    return nullptr;
  const auto& r = entries_.at(std::prev(it)->second).reg;
  return r.covers(at, n) ? &r : nullptr;
}

void registration_cache::unpin(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.pins == 0)
    return;
  it->second.used = clock::now();
  if (--it->second.pins == 0 && it->second.retired)
    drop(id);
}

void registration_cache::invalidate(const void* p, std::size_t n) {
  auto lo = reinterpret_cast<std::uintptr_t>(p);
  for_overlapping(lo, lo + n, [&](std::uint64_t id) { retire(id); });
}

void registration_cache::retire(std::uint64_t id) {
  auto& e = entries_.at(id);
  live_.erase(e.reg.base);
  lru_.erase(e.lru);
  bytes_ -= e.reg.length;
  e.retired = true;
  if (e.pins == 0)
    drop(id);
}

void registration_cache::drop(std::uint64_t id) {
  auto it = entries_.find(id);
  fabric_.deregister(it->second.reg);
  entries_.erase(it);
}

void registration_cache::evict_past_limits() {
  // From the least recently used end; pinned entries stay, even past the
  // bounds (they are in use: the bounds apply to what is merely cached).
  auto it = lru_.end();
  while (it != lru_.begin() && (live_.size() > limits_.entries || bytes_ > limits_.bytes)) {
    --it;
    std::uint64_t id = *it;
    if (entries_.at(id).pins > 0)
      continue;
    auto after = std::next(it);  // retire() unlinks `it`
    ++stats_.evictions;
    retire(id);
    it = after;
  }
}

void registration_cache::evict_unpinned() {
  std::vector<std::uint64_t> idle;
  for (auto id : lru_)
    if (entries_.at(id).pins == 0)
      idle.push_back(id);
  stats_.evictions += idle.size();
  for (auto id : idle)
    retire(id);
}

std::size_t registration_cache::trim(clock::time_point before) {
  std::vector<std::uint64_t> idle;
  for (auto id : lru_) {
    const auto& e = entries_.at(id);
    if (e.pins == 0 && e.used < before)
      idle.push_back(id);
  }
  stats_.trimmed += idle.size();
  for (auto id : idle)
    retire(id);
  return idle.size();
}

}  // namespace riomesh::channels
