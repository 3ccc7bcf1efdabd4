// The receiver's side of arena space: ranges whose last buffer handle has
// dropped, gathered so that the sender hears of them in few messages.
// Adjacent ranges merge (the sender's allocator accepts a merged run), and
// a batch is due once it holds enough bytes to matter to the sender, enough
// ranges to fill a message, or has waited long enough (a sender blocked on
// a full arena must not wait for a threshold that never comes).
#pragma once

#include <riomesh/actors/placement/extents.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace riomesh::actors {

struct arena_range {
  std::uint64_t offset = 0, length = 0;
  bool operator==(const arena_range& o) const { return offset == o.offset && length == o.length; }
};

class release_batch {
 public:
  using clock = std::chrono::steady_clock;

  struct limits {
    std::uint64_t bytes = 1u << 20;        // due at this many bytes
    std::size_t ranges = 64;               // or this many separate ranges
    std::chrono::microseconds delay{200};  // or when the oldest waited this long
  };

  release_batch() = default;
  explicit release_batch(const limits& l) : limits_(l) {}

  void add(arena_range r, clock::time_point now);
  bool due(clock::time_point now) const;
  // When due() turns true by time alone, if nothing more arrives.
  std::optional<clock::time_point> deadline() const;
  // The ranges gathered, merged and in offset order; the batch is empty after.
  std::vector<arena_range> take();

  bool empty() const { return ranges_.empty(); }
  std::uint64_t bytes() const { return bytes_; }

 private:
  limits limits_;
  extents ranges_;
  std::uint64_t bytes_ = 0;
  std::optional<clock::time_point> oldest_;
};

}  // namespace riomesh::actors
