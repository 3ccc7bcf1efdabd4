// Remote memory grants: a node lends one peer node a region of its memory
// to write into or read from, as the RDS zero-copy interface does with its
// cookies. A grant is a plain value: it goes in any message field, and it
// is only a claim. The owner checks every use against what it gave (which
// node, which rights, which bytes, still valid), and on rdma the peer can
// reach the memory only through a window bound to its own connection.
#pragma once

#include <cstdint>
#include <string>

namespace riomesh {

enum class grant_rights : std::uint8_t { read = 1, write = 2, read_write = 3 };

struct grant {
  std::string owner;   // the node whose memory it is
  std::string holder;  // the one node that may use it
  std::uint64_t id = 0;
  std::uint64_t length = 0;
  // Where the owner mapped the region for the holder (0: not mapped);
  // holder-side writes go to map + offset. Mapped for writing with write
  // rights, and for the holder's own reads and atomics if one_sided.
  std::uint64_t map = 0;
  std::uint8_t rights = 0;  // grant_rights bits
  bool once = false;        // ends with its first use
  // The connection reads one-sided (rdma with read resources): the holder
  // reads the map with RDMA READs and runs verbs atomics on it, and the
  // owner's CPU takes no part unless a `then` or `once` needs a word.
  bool one_sided = false;

  bool allows(grant_rights r) const {
    auto bits = static_cast<std::uint8_t>(r);
    return (rights & bits) == bits;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, grant& g) {
  return f(g.owner, g.holder, g.id, g.length, g.map, g.rights, g.once, g.one_sided);
}

// How a use of a grant ended, as its initiator hears it in
// (riomesh::grant_done_atom, operation id, grant_status, detail).
enum class grant_status : std::uint8_t {
  ok = 0,            // the bytes are in place
  remote_error = 1,  // the owner could not do it (detail says why)
  revoked = 2,       // revoked, used up (once), or its connection ended
  dropped = 3,       // the connection went down before the owner answered
  out_of_range = 4,  // beyond the grant's bytes
  refused = 5,       // not this node's grant, or not with these rights
};
std::string to_string(grant_status s);
// Known status codes only (a peer's byte is checked with this).
bool grant_status_known(std::uint8_t code);

}  // namespace riomesh
