// The placement half of a channel: memory this side maps for the peer to
// write (rsockets' riomap), and bytes placed into the peer's maps
// (riowrite), in order with the stream. A channel is one; the connection
// core sees only this of it, and takes the stream's bytes and events from
// whoever drives it (connection/core_drive.hpp), so a test can hand it
// placements in memory.
#pragma once

#include <riomesh/channels/engine/types.hpp>
#include <riomesh/channels/memory_registration.hpp>
#include <riomesh/channels/one_sided.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace riomesh::channels {

using engine::event;  // an iowrite's completion, a peer's map, ...
using engine::event_kind;
using engine::io_result;
using engine::status;

// What the peer may do with a map (bits): write into it (iowrite), and,
// where the connection reads one-sided (one_sided()), read it (ioread) and
// run atomics on its words (ioatomic).
// `once` (with write; tcp only, unsupported elsewhere): the peer writes
// the map once, in order from its start; all written, it ends on both
// sides with no unmap round, and unmap() sends nothing. Its unmap() says
// incomplete if not every byte was written; unmap it so only while the
// peer is not writing it (before asking it to, or to end the connection).
namespace map_access {
constexpr std::uint8_t write = 1, read = 2, atomic = 4, once = 8;
}

class iomap_access {
 public:
  virtual ~iomap_access() = default;

  // Exposes [base, base + length) for the peer to iowrite into, at `offset`
  // (default: the address). The peer learns of it by a peer_iomap event.
  // `access` beyond write needs one_sided(): unsupported otherwise.
  virtual map_result map(void* base, std::size_t length,
                         std::optional<std::uint64_t> offset = std::nullopt,
                         std::uint8_t access = map_access::write) = 0;
  virtual status unmap(std::uint64_t offset) = 0;
  // Places `length` bytes at the peer's mapped `offset`, ahead of any later
  // stream byte. `source` must stay untouched until iowrite_done(token).
  virtual io_result iowrite(const void* source, std::size_t length, std::uint64_t offset,
                            std::uint64_t token) = 0;
  // iowrite() of the pieces' bytes one after another, as if contiguous (a
  // gathered buffer). Where the fabric can, they go as one placement (tcp:
  // one frame, its payload gathered by the socket's writev); by default
  // only the first piece goes, and the caller goes on with the rest.
  struct piece {
    const void* data = nullptr;
    std::size_t length = 0;
  };
  virtual io_result iowrite_pieces(const piece* pieces, std::size_t count, std::uint64_t offset,
                                   std::uint64_t token) {
    if (count == 0)
      return {0, status::ok};
    return iowrite(pieces[0].data, pieces[0].length, offset, token);
  }

  // What the placements offer beyond writes, each behind an interface of
  // its own; null where the fabric or this connection has none of it:
  // one-sided reads and atomics, where negotiated both ways
  // (one_sided.hpp); registration of memory with the device
  // (memory_registration.hpp).
  virtual one_sided_access* one_sided() { return nullptr; }
  virtual memory_registration* registration() { return nullptr; }
};

}  // namespace riomesh::channels
