// How large a connection's receive arena should be, from what its sender
// asks and what it used: the receiver's policy, pure logic. An idle peer
// holds `first` bytes; a sender that stalls for space asks for more and
// gets four times its arena (or room for twice what it could not place),
// up to `cap`; an arena used to a quarter or less for a whole period
// shrinks to twice what it used, and one above the fair share to that
// share, never below `first`.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace riomesh::actors {

class arena_sizing {
 public:
  using clock = std::chrono::steady_clock;
  struct limits {
    std::uint64_t first = 256 * 1024;
    std::uint64_t cap = 64ull << 20;
    clock::duration period = std::chrono::seconds(1);
  };

  explicit arena_sizing(const limits& l, clock::time_point now = clock::now());

  // The size to move to for a sender's want of `needed` bytes, or none
  // (the arena is at its cap).
  std::optional<std::uint64_t> on_want(std::uint64_t needed, std::uint64_t current) const;
  // Bytes of the current arena in use now: the period's high-water mark.
  void used(std::uint64_t in_use) {
    if (in_use > high_)
      high_ = in_use;
  }
  // The arena moved (either way): a new period starts.
  void moved(clock::time_point now, std::uint64_t in_use);
  // Whether on_tick() has anything to judge: a period ended.
  bool due(clock::time_point now) const { return now >= period_end_; }
  // Once a period: the smaller size to move to, or none.
  std::optional<std::uint64_t> on_tick(clock::time_point now, std::uint64_t current,
                                       std::uint64_t in_use, std::uint64_t fair_share);
  const limits& bounds() const { return limits_; }

  static std::uint64_t ceil_pow2(std::uint64_t n);

 private:
  limits limits_;
  clock::time_point period_end_;
  std::uint64_t high_ = 0;
};

}  // namespace riomesh::actors
