// The node's registered pool: where runtime::allocate() takes buffers from,
// so that sending them needs neither a copy nor a registration. Slabs of
// memory registered once (through the fabric's registrar; none on tcp),
// carved first-fit; a buffer's range goes back when its last handle drops,
// on any thread. Slabs live as long as a buffer from them does, even past
// the pool object.
#pragma once

#include <riomesh/buffer.hpp>

#include <cstdint>
#include <memory>

namespace riomesh {
namespace channels {
class registrar;
struct registration;
}  // namespace channels

class buffer_pool {
 public:
  struct counters {
    std::uint64_t slabs = 0;         // live
    std::uint64_t slab_bytes = 0;    // live, registered
    std::uint64_t bytes_in_use = 0;  // handed out, not yet given back
    std::uint64_t allocations = 0;
  };

  // `fabric` may be null (tcp: nothing to register).
  buffer_pool(std::size_t slab_size, std::shared_ptr<channels::registrar> fabric);
  ~buffer_pool();
  buffer_pool(const buffer_pool&) = delete;
  buffer_pool& operator=(const buffer_pool&) = delete;

  // A buffer of exactly `size` bytes (0: the empty buffer). Throws
  // std::bad_alloc when no memory, or no registration, can be had.
  buffer allocate(std::size_t size);
  // The registration covering a pool buffer's bytes (rdma sends use its
  // lkey), or null for memory not from this pool.
  const channels::registration* registration_of(const buffer& b) const;

  counters stats() const;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

}  // namespace riomesh
