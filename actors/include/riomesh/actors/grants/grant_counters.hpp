// What each side of grants counts (any thread), for the node's counters
// (stats.hpp: node_counters), which add both sides.
#pragma once

#include <atomic>
#include <cstdint>

namespace riomesh::actors {

struct grant_counters {
  std::atomic<std::uint64_t> bytes_out{0}, bytes_in{0};
  std::atomic<std::uint64_t> fetched{0};  // reads and atomics of peers' grants done one-sided
  std::atomic<std::uint64_t> served{0};   // reads of our grants served by writing, atomics run here
  std::atomic<std::uint64_t> thens_carried{
      0};  // `then` messages delivered from the use they rode on
  // A use-once write's bytes, placed where they arrived and copied into
  // the region: the one copy such a write costs.
  std::atomic<std::uint64_t> copied_in{0};
};

}  // namespace riomesh::actors
