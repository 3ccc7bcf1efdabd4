// Which registration a send comes from. A buffer from the node's pool
// lives in a slab (its home block): the first send from a slab, to any
// peer on the device, registers the whole slab in the node's shared cache,
// and every later send from it hits; the cached registration holds the
// slab, so it never pins pages that were freed and reused. The user's
// memory (buffer::wrap) is registered by its page-aligned range and
// forgotten when the user gets it back (invalidation_bus.hpp). Anything
// else (a heap copy) is registered by the channel for the one write.
#pragma once

#include <riomesh/buffer.hpp>
#include <riomesh/channels/iomap_access.hpp>

#include <optional>

namespace riomesh::actors {

class send_registrations {
 public:
  struct counters {
    std::uint64_t registrations = 0;  // blocks this connection's sends registered
    std::uint64_t hits = 0;           // sends from a block already registered
    std::uint64_t per_write = 0;      // sends registered for that write only
  };

  explicit send_registrations(channels::iomap_access& io) : io_(io) {}

  // Pins the registration of `b`'s home block for one write; nothing if
  // the channel needs none, or `b` has no home (the channel then
  // registers for the write).
  std::optional<std::uint64_t> pin(const buffer& b);
  // Only ids pin() gave, so only where the channel registers memory.
  void unpin(std::uint64_t id) {
    if (auto* reg = io_.registration())
      reg->unpin_memory(id);
  }
  const counters& stats() const { return stats_; }

 private:
  channels::iomap_access& io_;
  counters stats_;
};

}  // namespace riomesh::actors
