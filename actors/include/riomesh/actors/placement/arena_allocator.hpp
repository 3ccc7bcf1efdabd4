// The sender's view of a peer's receive arena: which byte ranges are free to
// place buffers into. Space comes back when the receiver's last handle to a
// delivered buffer drops, in any order and in merged batches, so this is a
// first-fit allocator over free extents, not a ring. Pure logic: the
// connection actor owns one per peer and feeds it the peer's releases.
#pragma once

#include <riomesh/actors/envelope/envelope.hpp>
#include <riomesh/actors/placement/extents.hpp>

#include <cstdint>
#include <map>
#include <optional>

namespace riomesh::actors {

class arena_allocator {
 public:
  // Offsets and lengths are multiples of this: placements start on a
  // cache line, and the receiver can view them as aligned buffers.
  static constexpr std::uint64_t alignment = wire_envelope::granule;

  explicit arena_allocator(std::uint64_t size);

  // The offset of `n` bytes (rounded up to the alignment), or nothing if no
  // free extent is large enough. n = 0 takes nothing and gets nothing.
  std::optional<std::uint64_t> allocate(std::uint64_t n);

  // Gives back [offset, offset + n): one allocation, or several adjacent
  // ones merged by the receiver. False, changing nothing, if the range is
  // not exactly such a run: the peer released space it was never given.
  bool release(std::uint64_t offset, std::uint64_t n);

  // Everything free again: the peer is gone and its arena with it.
  void reset();

  std::uint64_t size() const { return size_; }
  std::uint64_t free_bytes() const { return free_bytes_; }
  std::uint64_t largest_free() const;
  std::size_t allocations() const { return used_.size(); }

  static std::uint64_t round_up(std::uint64_t n) {
    return (n + alignment - 1) / alignment * alignment;
  }

 private:
  void give_back(std::uint64_t offset, std::uint64_t n);

  std::uint64_t size_;
  std::uint64_t free_bytes_;
  extents free_;
  std::map<std::uint64_t, std::uint64_t> used_;  // offset -> length, as allocated
};

}  // namespace riomesh::actors
