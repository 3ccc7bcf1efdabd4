// One-sided reads and atomics on the peer's maps: the peer's CPU takes no
// part. Offered by a channel that negotiated them both ways (rdma with read
// resources: channel::one_sided()); elsewhere (tcp, rsocket peers) the peer
// serves a read by iowrite and runs an atomic itself.
#pragma once

#include <riomesh/channels/engine/types.hpp>

#include <cstddef>
#include <cstdint>

namespace riomesh::channels {

// One-sided atomics on an 8-byte word of the peer's map.
enum class atomic_op : std::uint8_t {
  fetch_add,     // adds `a`
  compare_swap,  // swaps in `b` if the word is `a`
};

class one_sided_access {
 public:
  struct destination {
    void* data = nullptr;
    std::size_t length = 0;
  };
  // Reads [offset, offset + total) of the peer's maps (mapped with read
  // access) into the pieces, one after another: ioread_done(token) once
  // all of it is in place. Writes behind it on the connection start only
  // after it completed, so a message sent after it tells the peer it is
  // done with the bytes.
  virtual engine::io_result ioread(const destination* into, std::size_t count, std::uint64_t offset,
                                   std::uint64_t token) = 0;
  // An atomic on the peer's 8-byte word at `offset` (aligned in its
  // memory, mapped with atomic access): ioatomic_done(token) carries the
  // word's old value; fenced as ioread.
  virtual engine::io_result ioatomic(atomic_op op, std::uint64_t offset, std::uint64_t a,
                                     std::uint64_t b, std::uint64_t token) = 0;

 protected:
  ~one_sided_access() = default;
};

}  // namespace riomesh::channels
