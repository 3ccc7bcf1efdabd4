// The actor handles a serialized message holds, found in its bytes: what
// this node hands a peer when it sends it a message (export_table: the peer
// may then address and link to those actors, and to no others it was not
// given). CAF 0.17 writes a handle as the actor's id (8 bytes, big-endian)
// followed by its node's id: the implementation's atom (8 bytes), the
// process id (4 bytes, big-endian) and the host id (20 bytes). The atom,
// read off this node's own id as CAF serializes it, finds them; bytes the
// codec knows are application data (inline buffers) are skipped.
#pragma once

#include <riomesh/actors/peers/node_table.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace riomesh::actors {

struct handle_ref {
  std::uint64_t actor = 0;
  node_table::key node;
  bool operator==(const handle_ref& o) const { return actor == o.actor && node == o.node; }
};

class handle_scan {
 public:
  // `node_id_bytes`: a node id as CAF serializes it (32 bytes); its first 8
  // are the atom every handle's node id starts with.
  explicit handle_scan(const std::vector<unsigned char>& node_id_bytes);

  std::vector<handle_ref> scan(
      const unsigned char* body, std::size_t size,
      const std::vector<std::pair<std::size_t, std::size_t>>& opaque) const;

 private:
  std::array<unsigned char, 8> atom_{};
  bool usable_ = false;
};

}  // namespace riomesh::actors
