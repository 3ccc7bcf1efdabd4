// Byte ranges of one offset space that never overlap: the maps each side
// of a tcp channel has exposed. Every lookup is O(log n), since a peer
// decides how many there are (up to its bound) and how often it asks.
#pragma once

#include <cstdint>
#include <map>

namespace riomesh::channels::tcp {

struct region {
  std::uint64_t offset = 0, length = 0;
  unsigned char* base = nullptr;  // where it lives here; null for the peer's
  bool once = false;              // written once, in order (frame.hpp's map_once)
  std::uint64_t filled = 0;       // of a once map: bytes written from its start
};

class region_set {
 public:
  // False, changing nothing, if [offset, offset + length) is empty, wraps,
  // or overlaps a region already held.
  bool add(const region& r);
  // The region that starts exactly at `offset`, removed; false if none.
  bool remove(std::uint64_t offset, region* out = nullptr);
  // The region holding all of [at, at + n), or null. Overflow-safe.
  const region* holding(std::uint64_t at, std::uint64_t n) const;
  region* holding(std::uint64_t at, std::uint64_t n) {
    return const_cast<region*>(static_cast<const region_set*>(this)->holding(at, n));
  }
  bool overlaps(std::uint64_t at, std::uint64_t n) const;

  std::size_t size() const { return regions_.size(); }
  bool empty() const { return regions_.empty(); }
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [offset, r] : regions_)
      f(r);
  }

 private:
  std::map<std::uint64_t, region> regions_;  // by offset
};

}  // namespace riomesh::channels::tcp
