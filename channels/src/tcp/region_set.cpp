#include <riomesh/channels/tcp/region_set.hpp>

#include <limits>

namespace riomesh::channels::tcp {

bool region_set::overlaps(std::uint64_t at, std::uint64_t n) const {
  if (n == 0)
    return false;
  // Only the last region starting before the end can reach into the range.
  auto last = at > std::numeric_limits<std::uint64_t>::max() - n ? regions_.end()
                                                                 : regions_.lower_bound(at + n);
  if (last == regions_.begin())
    return false;
  --last;
  const auto& r = last->second;
  return r.offset + r.length > at;
}

bool region_set::add(const region& r) {
  if (r.length == 0 || r.offset > std::numeric_limits<std::uint64_t>::max() - r.length)
    return false;
  if (overlaps(r.offset, r.length))
    return false;
  regions_.emplace(r.offset, r);
  return true;
}

bool region_set::remove(std::uint64_t offset, region* out) {
  auto it = regions_.find(offset);
  if (it == regions_.end())
    return false;
  if (out)
    *out = it->second;
  regions_.erase(it);
  return true;
}

const region* region_set::holding(std::uint64_t at, std::uint64_t n) const {
  auto it = regions_.upper_bound(at);
  if (it == regions_.begin())
    return nullptr;
  --it;
  const auto& r = it->second;
  std::uint64_t into = at - r.offset;
  return into <= r.length && n <= r.length - into ? &r : nullptr;
}

}  // namespace riomesh::channels::tcp
