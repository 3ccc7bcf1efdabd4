#include <riomesh/actors/placement/release_batch.hpp>

namespace riomesh::actors {

void release_batch::add(arena_range r, clock::time_point now) {
  if (r.length == 0)
    return;
  if (!oldest_)
    oldest_ = now;
  bytes_ += r.length;
  add_extent(ranges_, r.offset, r.length);
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
