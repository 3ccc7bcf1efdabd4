// The regions this side mapped (riomap), the peer's iomap slots they occupy,
// and the entries waiting to be written into those slots. Unmapping clears the
// peer's slot with a zeroed entry, so a stale riowrite finds no mapping
// instead of hitting a dead rkey and killing the connection; an rsocket peer
// reads a zero-length entry as "no mapping" too.
#pragma once

#include <riomesh/channels/engine/types.hpp>
#include <riomesh/channels/wire/sge.hpp>

#include <deque>
#include <optional>
#include <vector>

namespace riomesh::engine {

struct local_map {
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
  std::uint32_t rkey = 0;
  std::uint64_t offset = 0;
  int index = -1;  // peer slot, -1 for a local-only map
};

struct iomap_publication {
  std::uint32_t index = 0;
  wire::iomap_entry entry;  // all zero: clears the slot
};

class iomap_table {
 public:
  void set_peer_slots(std::uint32_t slots) { used_.assign(slots, false); }
  std::uint32_t peer_slots() const { return static_cast<std::uint32_t>(used_.size()); }

  struct added {
    status st = status::ok;
    std::uint64_t offset = 0;
    int index = -1;
  };
  // `offset` empty: use the region's address, as rsockets does for -1.
  added add(const region& r, bool remote_write, std::optional<std::uint64_t> offset);
  status remove(std::uint64_t addr, std::uint64_t length);

  bool has_pending() const { return !pending_.empty(); }
  const iomap_publication& next_pending() const { return pending_.front(); }
  void pop_pending() { pending_.pop_front(); }
  const std::vector<local_map>& maps() const { return maps_; }

 private:
  std::vector<local_map> maps_;
  std::vector<bool> used_;  // per peer slot
  std::deque<iomap_publication> pending_;
};

}  // namespace riomesh::engine
