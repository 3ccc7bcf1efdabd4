// Disjoint byte ranges kept merged: offset -> length, no two adjacent. The
// free space of an arena and a batch of released ranges are both this.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace riomesh::actors {

using extents = std::map<std::uint64_t, std::uint64_t>;

// Adds [offset, offset + length), which must not overlap what is there,
// merged with the extents it touches on either side.
inline void add_extent(extents& e, std::uint64_t offset, std::uint64_t length) {
  auto next = e.lower_bound(offset);
  if (next != e.end() && offset + length == next->first) {
    length += next->second;
    next = e.erase(next);
  }
  if (next != e.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += length;
      return;
    }
  }
  e[offset] = length;
}

}  // namespace riomesh::actors
