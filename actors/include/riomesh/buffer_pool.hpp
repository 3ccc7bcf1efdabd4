// The node's pool: where runtime::allocate() takes buffers from, so that
// sending them needs neither a copy nor a registration of its own. Slabs
// from the configured memory provider (memory_region.hpp), carved
// first-fit; the first send of a slab's buffer registers the whole slab in
// the node's shared send cache, once for every peer on the device. A
// buffer's range goes back when its last handle drops, on any thread.
// Slabs live as long as a buffer from them does, even past the pool
// object.
#pragma once

#include <riomesh/buffer.hpp>
#include <riomesh/config/settings.hpp>

#include <cstdint>
#include <memory>

namespace riomesh {

class buffer_pool {
 public:
  struct counters {
    std::uint64_t slabs = 0;         // live
    std::uint64_t slab_bytes = 0;    // live
    std::uint64_t bytes_in_use = 0;  // handed out, not yet given back
    std::uint64_t allocations = 0;
  };

  buffer_pool(std::size_t slab_size,
              config::memory_provider provider = config::memory_provider::anonymous);
  ~buffer_pool();
  buffer_pool(const buffer_pool&) = delete;
  buffer_pool& operator=(const buffer_pool&) = delete;

  // A buffer of exactly `size` bytes (0: the empty buffer). Throws
  // std::bad_alloc when no memory can be had.
  buffer allocate(std::size_t size);
  counters stats() const;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

}  // namespace riomesh
