#include <riomesh/actors/placement/own_arena.hpp>

#include <riomesh/actors/envelope/envelope.hpp>

namespace riomesh::actors {

void own_arena::add(arena_segment s) {
  current_ = s.offset;
  next_ = s.offset + s.size + wire_envelope::granule;
  by_offset_[s.offset] = std::move(s);
}

const arena_segment* own_arena::holding(std::uint64_t offset, std::uint64_t length) const {
  auto it = by_offset_.upper_bound(offset);
  if (it == by_offset_.begin())
    return nullptr;
  --it;
  const auto& s = it->second;
  // Overflow-safe: offset + length is never computed.
  if (offset - s.offset >= s.size || length > s.size - (offset - s.offset))
    return nullptr;
  return &s;
}

const arena_segment* own_arena::current() const {
  auto it = by_offset_.find(current_);
  return it == by_offset_.end() ? nullptr : &it->second;
}

bool own_arena::in_current(std::uint64_t offset) const {
  auto* c = current();
  return c && offset >= c->offset && offset - c->offset < c->size;
}

bool own_arena::remove(std::uint64_t offset) {
  if (offset == current_)
    return false;
  return by_offset_.erase(offset) > 0;
}

std::uint64_t own_arena::held_bytes() const {
  std::uint64_t n = 0;
  for (const auto& [at, s] : by_offset_)
    n += s.size;
  return n;
}

}  // namespace riomesh::actors
