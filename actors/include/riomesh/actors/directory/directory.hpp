// The directory: one per runtime, the owner of the node actor, and where
// actor messages meet the wire. It keeps the published names, the local
// actors peers know by id, the proxies of remote actors, and what waits on
// each peer (requests, name lookups). It takes:
//   (publish_atom, name, strong_actor_ptr, interface) -> bool
//   (publish_atom, name)                       unpublish -> bool
//   (resolve_atom, node, name, milliseconds)   -> (strong_actor_ptr, interface)
//                                                 or a riomesh error
//   (notify_atom, node, actor)                 (writable_atom, node) to that
//                                                 actor when node's queue drains
//   (stats_atom)                               -> node_stats
//   (expose_atom, node, buffer)                -> offset: mapped for node
//   (unexpose_atom, node, offset)              -> bool
//   (place_atom, node, offset, buffer, notify) a direct write into node's
//                                                 map, ahead of later messages
//   (stop_atom)                                fails what waits, ends the node
// and, from proxies, (forward_atom, forwarded). A one-way message that
// cannot go out is reported to its sender as
//   (undelivered_atom, node, error).
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/node/node_actor.hpp>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::actors {

struct directory_params {
  node_params node;
  std::size_t eager_threshold = 16 * 1024;
};

// What moved through this node's directory, over all peers.
struct directory_counters {
  std::uint64_t messages_out = 0, messages_in = 0;
  std::uint64_t requests_out = 0, responses_in = 0;
  std::uint64_t bytes_placed_out = 0, bytes_placed_in = 0;      // buffers sent by iowrite
  std::uint64_t payload_copied_out = 0, payload_copied_in = 0;  // buffers serialized inline
  std::uint64_t direct_writes = 0;                              // into peers' own maps (place_atom)
  std::uint64_t undeliverable = 0;  // refused locally (congested, encode, not connected)
  std::uint64_t bad_inbound = 0;    // decode failures, unknown receivers, refusals
  std::uint64_t system_refused = 0;  // CAF system messages from the wire, refused
  std::uint64_t proxies = 0, exported = 0, published = 0;
};

struct node_stats {
  directory_counters node;
  std::vector<std::pair<std::string, connection_core::counters>> peers;
};

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::node_stats)

namespace riomesh::actors {

// Opens nothing: `listener` is already listening at p.node.listen.
caf::actor spawn_directory(caf::actor_system& sys, progress_loop& loop, const directory_params& p,
                           std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
