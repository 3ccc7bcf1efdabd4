// Registrations of the memory a connection sends from, kept for reuse. A
// buffer from the node's pool lives in a slab (its home block); the first
// send from a slab registers the whole slab with this connection's
// channel, and every later send from it hits. Each cached registration
// holds its slab's memory, so it can never pin pages that have been freed
// and reused for something else. The user's memory (buffer::wrap) is
// registered by its page-aligned range and forgotten when the user gets it
// back (invalidation_bus.hpp). Anything else (a heap copy) is registered
// by the channel for the one write.
#pragma once

#include <riomesh/actors/placement/invalidation_bus.hpp>
#include <riomesh/actors/placement/registration_cache.hpp>
#include <riomesh/buffer.hpp>
#include <riomesh/channels/channel.hpp>

#include <map>
#include <memory>
#include <optional>

namespace riomesh::actors {

class send_registrations {
 public:
  struct counters {
    std::uint64_t registrations = 0;  // blocks registered
    std::uint64_t hits = 0;           // sends from a block already registered
    std::uint64_t per_write = 0;      // sends registered for that write only
  };

  send_registrations(channels::channel& ch, const registration_cache::limits& l);
  ~send_registrations();
  send_registrations(const send_registrations&) = delete;
  send_registrations& operator=(const send_registrations&) = delete;

  // Pins the registration of `b`'s home block for one write; nothing if
  // the channel needs none, or `b` has no home (the channel then
  // registers for the write).
  std::optional<std::uint64_t> pin(const buffer& b);
  void unpin(std::uint64_t lease);
  counters stats() const;

 private:
  class fabric : public registrar {
   public:
    explicit fabric(channels::channel& ch) : ch_(ch) {}
    std::optional<registration> register_range(std::uintptr_t base, std::size_t length) override;
    void deregister(const registration& r) override;
    std::shared_ptr<const void> next_keep;  // the block being registered

   private:
    channels::channel& ch_;
    std::map<std::uintptr_t, std::shared_ptr<const void>> keep_;  // by base
  };

  channels::channel& ch_;
  fabric fabric_;
  registration_cache cache_;
  std::shared_ptr<invalidation_bus::inbox> gone_;
  std::uint64_t per_write_ = 0;
};

}  // namespace riomesh::actors
