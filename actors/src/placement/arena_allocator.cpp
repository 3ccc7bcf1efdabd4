#include <riomesh/actors/placement/arena_allocator.hpp>

#include <algorithm>

namespace riomesh::actors {

arena_allocator::arena_allocator(std::uint64_t size)
    : size_(size / alignment * alignment), free_bytes_(size_) {
  if (size_ > 0)
    free_[0] = size_;
}

std::optional<std::uint64_t> arena_allocator::allocate(std::uint64_t n) {
  if (n == 0 || n > size_)
    return std::nullopt;
  n = round_up(n);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < n)
      continue;
    std::uint64_t at = it->first, left = it->second - n;
    free_.erase(it);
    if (left > 0)
      free_[at + n] = left;
    used_[at] = n;
    free_bytes_ -= n;
    return at;
  }
  return std::nullopt;
}

bool arena_allocator::release(std::uint64_t offset, std::uint64_t n) {
  if (n == 0 || offset > size_ || n > size_ - offset)
    return false;
  // The allocations from `offset` must tile [offset, offset + n) exactly.
  auto first = used_.find(offset);
  if (first == used_.end())
    return false;
  auto it = first;
  std::uint64_t covered = 0;
  while (covered < n) {
    if (it == used_.end() || it->first != offset + covered)
      return false;
    covered += it->second;
    ++it;
  }
  if (covered != n)
    return false;
  used_.erase(first, it);
  give_back(offset, n);
  return true;
}

void arena_allocator::give_back(std::uint64_t offset, std::uint64_t n) {
  free_bytes_ += n;
  add_extent(free_, offset, n);
}

void arena_allocator::reset() {
  used_.clear();
  free_.clear();
  free_bytes_ = size_;
  if (size_ > 0)
    free_[0] = size_;
}

std::uint64_t arena_allocator::largest_free() const {
  std::uint64_t best = 0;
  for (const auto& [at, n] : free_)
    best = std::max(best, n);
  return best;
}

}  // namespace riomesh::actors
