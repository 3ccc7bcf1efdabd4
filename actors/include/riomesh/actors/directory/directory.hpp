// The directory: one per runtime, the owner of the node actor, and the
// slow path of actor messaging: publishing, looking names up on peers,
// peers coming and going (what waited on a lost one fails), statistics,
// stopping. Messages themselves never pass through it: proxies and links
// meet in the exchange (exchange.hpp). It takes:
//   (publish_atom, name, strong_actor_ptr, interface) -> bool
//   (publish_atom, name)                       unpublish -> bool
//   (resolve_atom, node, name, milliseconds)   -> (strong_actor_ptr, interface)
//                                                 or a riomesh error
//   (notify_atom, node, actor)                 (writable_atom, node) to that
//                                                 actor when node's queue drains
//   (stats_atom)                               -> node_stats
//   (expose_atom, node, buffer)                -> offset: mapped for node
//   (unexpose_atom, node, offset)              -> bool
//   (stop_atom)                                fails what waits, ends the node
// A one-way message that cannot go out is reported to its sender as
//   (undelivered_atom, node, error).
#pragma once

#include <riomesh/actors/node/node_actor.hpp>
#include <riomesh/stats.hpp>

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

using node_stats = riomesh::node_stats;

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::node_stats)

namespace riomesh::actors {

class exchange;

// Opens nothing: `listener` is already listening at p.node.listen. `loop`
// and `x` must outlive the actor.
caf::actor spawn_directory(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                           const directory_params& p, std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
