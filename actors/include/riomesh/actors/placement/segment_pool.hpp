// The node's receive pool: arena segments its connections gave up, kept
// (up to a byte bound) for the next connection that grows, so that growing
// again costs no fresh pages (a page fault and zeroing per 4 KiB, about a
// tenth of the CPU of a 1 MiB message stream that regrew its arena) and no
// mmap. A segment a peer wrote into is cleared before another peer gets
// it: a lying envelope could otherwise hand our application a third
// peer's bytes. Thread-safe: segments come back when their last view
// drops, on any thread.
#pragma once

#include <riomesh/actors/placement/own_arena.hpp>
#include <riomesh/channels/memory/memory_region.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace riomesh::actors {

class segment_pool : public std::enable_shared_from_this<segment_pool> {
 public:
  // Segments from `from`; at most `keep` bytes of them kept while unused.
  static std::shared_ptr<segment_pool> make(channels::memory_source from, std::uint64_t keep);

  // `size` bytes for `peer`: one kept (its own from before as it was,
  // another peer's cleared), or new. data is null, `error` set, if none.
  arena_segment take(std::uint64_t size, const std::string& peer, std::string& error);

  // Frees what was kept unused for `idle` or longer: a node that was busy
  // once does not hold its peak for good.
  void trim(std::chrono::steady_clock::time_point now,
            std::chrono::steady_clock::duration idle = std::chrono::seconds(5));

  struct counters {
    std::uint64_t made = 0, reused = 0, cleared = 0, kept_bytes = 0;
  };
  counters stats() const;

 private:
  segment_pool(channels::memory_source from, std::uint64_t keep);
  void give(std::shared_ptr<channels::memory_region> r, std::string peer);

  struct kept {
    std::shared_ptr<channels::memory_region> region;
    std::string peer;
    std::chrono::steady_clock::time_point since;
  };
  channels::memory_source from_;
  std::uint64_t keep_;
  mutable std::mutex lock_;
  std::multimap<std::uint64_t, kept> kept_;  // by size
  counters stats_;
};

}  // namespace riomesh::actors
