// The sender's view of a peer's receive arena when the peer sizes it by
// demand (arena_sizing.hpp): one current segment that new buffers go to,
// and the segments it moved away from, kept until every buffer placed in
// them came back. Segments never touch (the peer leaves a gap), so a
// merged release never spans two. Pure logic, as arena_allocator.
#pragma once

#include <riomesh/actors/placement/arena_allocator.hpp>

#include <cstdint>
#include <map>
#include <optional>

namespace riomesh::actors {

class peer_arena {
 public:
  // The first segment: [0, size), mapped with the session.
  explicit peer_arena(std::uint64_t size);

  // n bytes in the current segment: the peer's offset, or nothing.
  std::optional<std::uint64_t> allocate(std::uint64_t n);
  // Space the peer gives back, in whichever segment holds it. False,
  // changing nothing, for space it was never given.
  bool release(std::uint64_t offset, std::uint64_t n);
  // The peer moved the arena to [offset, offset + size): new space goes
  // there. False, changing nothing, unless it lies wholly past every
  // segment so far (offsets are never reused) and below `limit`.
  bool move_to(std::uint64_t offset, std::uint64_t size, std::uint64_t limit);

  std::uint64_t current_offset() const { return offset_; }
  std::uint64_t current_size() const { return current_.size(); }
  std::uint64_t free_bytes() const { return current_.free_bytes(); }
  // Segments moved from whose space is still out.
  std::size_t retiring() const { return old_.size(); }
  // Where the next segment may start: past everything, with a gap.
  std::uint64_t next_offset() const { return end_; }

 private:
  std::uint64_t offset_ = 0;
  arena_allocator current_;
  std::map<std::uint64_t, arena_allocator> old_;  // by offset
  std::uint64_t end_ = 0;
};

}  // namespace riomesh::actors
