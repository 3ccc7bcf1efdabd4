// Memory registrations kept for reuse: registering is a system call that
// pins pages (tens of microseconds per MiB), far too slow per message. The
// cache registers page-aligned ranges, finds one that covers a buffer,
// pins it while a transfer uses it, and evicts the least recently used
// unpinned ones past its bounds (entries and bytes: registered memory is
// locked memory). Memory the user frees must be invalidated first, or a
// stale registration would pin whatever pages come to live there. Pure
// logic over a registrar interface; the node's memory domain shares one per
// device among its connections (shared_registrations.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <unordered_map>

namespace riomesh::channels {

struct registration {
  std::uintptr_t base = 0;
  std::size_t length = 0;
  std::uint32_t lkey = 0, rkey = 0;
  void* handle = nullptr;  // the fabric's (rdma: the ibv_mr)
  bool covers(std::uintptr_t at, std::size_t n) const {
    return at >= base && at - base <= length && n <= length - (at - base);
  }
};

// The fabric's registration calls (rdma: ibv_reg_mr and ibv_dereg_mr).
class registrar {
 public:
  virtual ~registrar() = default;
  virtual std::optional<registration> register_range(std::uintptr_t base, std::size_t length) = 0;
  virtual void deregister(const registration& r) = 0;
};

class registration_cache {
 public:
  struct limits {
    std::size_t entries = 1024;
    std::uint64_t bytes = 1ull << 30;
    std::size_t page = 4096;
  };
  struct counters {
    std::uint64_t hits = 0, misses = 0, registrations = 0, evictions = 0, failures = 0;
    std::uint64_t trimmed = 0;  // given back for sitting unused (trim())
  };
  using clock = std::chrono::steady_clock;
  struct lease {
    std::uint64_t id = 0;
    registration reg;
  };

  registration_cache(registrar& fabric, const limits& l);
  ~registration_cache();  // deregisters everything
  registration_cache(const registration_cache&) = delete;
  registration_cache& operator=(const registration_cache&) = delete;

  // A registration covering [p, p + n), pinned until unpin(lease.id).
  // A refused registration (a bound on pinned memory) evicts every unpinned
  // entry and is tried once more. Nothing if n is 0 or the fabric refused
  // again (counted as a failure).
  std::optional<lease> acquire(const void* p, std::size_t n);
  // The live registration covering [p, p + n), without pinning it (the
  // caller holds a pin on it), or null.
  const registration* covering(const void* p, std::size_t n) const;
  void unpin(std::uint64_t id);
  // [p, p + n) is going away: no later acquire finds a registration that
  // overlaps it; pinned ones are deregistered when their last pin goes.
  void invalidate(const void* p, std::size_t n);
  // Gives back every unpinned entry not used since `before`: memory sent
  // from once should not stay pinned for the life of the node. How many.
  std::size_t trim(clock::time_point before);

  const counters& stats() const { return stats_; }
  std::size_t entries() const { return live_.size(); }
  std::uint64_t bytes() const { return bytes_; }

 private:
  struct entry {
    registration reg;
    std::size_t pins = 0;
    bool retired = false;  // out of the index, deregistered at its last unpin
    std::list<std::uint64_t>::iterator lru;
    clock::time_point used;  // last acquired or unpinned
  };
  // Takes `id` out of the index; deregisters it now if nothing pins it.
  void retire(std::uint64_t id);
  void drop(std::uint64_t id);
  void evict_past_limits();
  void evict_unpinned();
  // Ids of live entries overlapping [lo, hi).
  template <class F>
  void for_overlapping(std::uintptr_t lo, std::uintptr_t hi, F&& f);

  registrar& fabric_;
  limits limits_;
  counters stats_;
  std::uint64_t next_id_ = 1;
  std::uint64_t bytes_ = 0;  // of live (indexed) entries
  std::unordered_map<std::uint64_t, entry> entries_;
  std::map<std::uintptr_t, std::uint64_t> live_;  // base -> id; live ranges never overlap
  std::list<std::uint64_t> lru_;                  // live ids, most recent first
};

}  // namespace riomesh::channels
