// The directory: one per runtime, the owner of the node actor, and the
// slow path of actor messaging: publishing, looking names up on peers,
// peers coming and going (what waited on a lost one fails), statistics,
// stopping. Messages themselves never pass through it: proxies and
// connection actors meet in the exchange (exchange.hpp). Its interface is
// directory_actor below; a one-way message that cannot go out is reported
// to its sender as (undelivered_atom, node, error), by the exchange.
#pragma once

#include <riomesh/actors/node/node_actor.hpp>
#include <riomesh/stats.hpp>

#include <riomesh/actors/atoms.hpp>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>

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

using directory_actor = caf::typed_actor<
    // Connects to the node listening there: its name once set up.
    caf::replies_to<dial_atom, std::string, std::uint16_t>::with<std::string>,
    // Publishes under a name (false: taken), with its interface for peers.
    caf::replies_to<publish_atom, std::string, caf::strong_actor_ptr, std::string>::with<bool>,
    caf::replies_to<unpublish_atom, std::string>::with<bool>,
    // An actor published on a node (this one or a peer), with its
    // interface; or a riomesh error (not_published, not_connected, ...).
    caf::replies_to<resolve_atom, std::string, std::string,
                    std::chrono::milliseconds>::with<caf::strong_actor_ptr, std::string>,
    // (writable_atom, node) to the actor once node's queue drains.
    caf::reacts_to<notify_atom, std::string, caf::actor>,
    caf::replies_to<stats_atom>::with<node_stats>,
    // Fails what waits, drains the connections, ends the node, then itself.
    caf::reacts_to<stop_atom>>;

// Opens nothing: `listener` is already listening at p.node.listen. `loop`
// and `x` must outlive the actor.
directory_actor spawn_directory(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                                const directory_params& p,
                                std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
