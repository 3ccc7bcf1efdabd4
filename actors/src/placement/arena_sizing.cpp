#include <riomesh/actors/placement/arena_sizing.hpp>

#include <algorithm>

namespace riomesh::actors {

arena_sizing::arena_sizing(const limits& l, clock::time_point now)
    : limits_(l), period_end_(now + l.period) {}

std::uint64_t arena_sizing::ceil_pow2(std::uint64_t n) {
  std::uint64_t p = 1;
  while (p < n && p < (std::uint64_t{1} << 62))
    p <<= 1;
  return p;
}

std::optional<std::uint64_t> arena_sizing::on_want(std::uint64_t needed,
                                                   std::uint64_t current) const {
  // Four times: a stream of messages reaches its window in few steps (each
  // a stall and a round trip). Or room for two of what did not fit: the
  // next one is placed while the receiver still holds this one.
  auto target = std::max(current * 4, ceil_pow2(needed) * 2);
  target = std::min(target, limits_.cap);
  if (target <= current)
    return std::nullopt;
  return target;
}

void arena_sizing::moved(clock::time_point now, std::uint64_t in_use) {
  period_end_ = now + limits_.period;
  high_ = in_use;
}

std::optional<std::uint64_t> arena_sizing::on_tick(clock::time_point now, std::uint64_t current,
                                                   std::uint64_t in_use, std::uint64_t fair_share) {
  if (now < period_end_)
    return std::nullopt;
  auto high = std::max(high_, in_use);
  moved(now, in_use);
  if (current <= limits_.first)
    return std::nullopt;
  std::uint64_t target = current;
  if (high * 4 <= current)  // a quarter was enough all period: twice that is
    target = ceil_pow2(high * 2);
  if (target > fair_share) {
    std::uint64_t share = 1;
    while (share * 2 <= fair_share)
      share *= 2;
    target = share;
  }
  target = std::max(target, limits_.first);
  if (target >= current)
    return std::nullopt;
  return target;
}

}  // namespace riomesh::actors
