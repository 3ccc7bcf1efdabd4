#include <riomesh/actors/placement/peer_arena.hpp>

namespace riomesh::actors {

peer_arena::peer_arena(std::uint64_t size) : current_(size), end_(size) {}

std::optional<std::uint64_t> peer_arena::allocate(std::uint64_t n) {
  auto at = current_.allocate(n);
  if (!at)
    return std::nullopt;
  return offset_ + *at;
}

bool peer_arena::release(std::uint64_t offset, std::uint64_t n) {
  if (offset >= offset_ && offset - offset_ < current_.size())
    return current_.release(offset - offset_, n);
  auto it = old_.upper_bound(offset);
  if (it == old_.begin())
    return false;
  --it;
  if (offset - it->first >= it->second.size() || !it->second.release(offset - it->first, n))
    return false;
  if (it->second.allocations() == 0)
    old_.erase(it);  // all of it came back: the peer may take it down
  return true;
}

bool peer_arena::move_to(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
  if (size < arena_allocator::alignment || offset < end_ || offset > limit ||
      size > limit - offset || offset % arena_allocator::alignment != 0)
    return false;
  if (current_.allocations() > 0)
    old_.emplace(offset_, std::move(current_));
  offset_ = offset;
  current_ = arena_allocator(size);
  end_ = offset + size;
  return true;
}

}  // namespace riomesh::actors
