#include <riomesh/actors/placement/release_batch.hpp>

#include <iterator>

namespace riomesh::actors {

void release_batch::add(arena_range r, clock::time_point now) {
  if (r.length == 0)
    return;
  if (!oldest_)
    oldest_ = now;
  bytes_ += r.length;
  auto next = ranges_.lower_bound(r.offset);
  if (next != ranges_.end() && r.offset + r.length == next->first) {
    r.length += next->second;
    next = ranges_.erase(next);
  }
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == r.offset) {
      prev->second += r.length;
      return;
    }
  }
  ranges_[r.offset] = r.length;
}

bool release_batch::due(clock::time_point now) const {
  if (ranges_.empty())
    return false;
  return bytes_ >= limits_.bytes || ranges_.size() >= limits_.ranges ||
         now - *oldest_ >= limits_.delay;
}

std::optional<release_batch::clock::time_point> release_batch::deadline() const {
  if (!oldest_)
    return std::nullopt;
  return *oldest_ + limits_.delay;
}

std::vector<arena_range> release_batch::take() {
  std::vector<arena_range> out;
  out.reserve(ranges_.size());
  for (const auto& [offset, length] : ranges_)
    out.push_back({offset, length});
  ranges_.clear();
  bytes_ = 0;
  oldest_.reset();
  return out;
}

}  // namespace riomesh::actors
