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

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/node/node_actor.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>

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
  std::uint64_t direct_writes = 0;   // into peers' own maps (exchange::place)
  std::uint64_t undeliverable = 0;   // refused locally (congested, encode, not connected)
  std::uint64_t bad_inbound = 0;     // decode failures, unknown receivers, refusals
  std::uint64_t system_refused = 0;  // CAF system messages from the wire, refused
  std::uint64_t links_refused = 0;   // links to actors never handed to the peer
  std::uint64_t thens_carried = 0;   // grant `then` messages delivered from their use
  // Reads and atomics of peers' grants this node did one-sided (RDMA READ,
  // verbs atomics), and those of its own grants its I/O thread served
  // (a write of the bytes, a CPU atomic) where the connection cannot.
  std::uint64_t grants_fetched = 0, grants_served = 0;
  // Hand-offs between threads: enqueues into actors' mailboxes (deliveries,
  // responses, failure notices, link events) and pushes onto links'
  // outboxes. One of each per message sent and delivered.
  std::uint64_t mailbox_enqueues = 0, outbox_pushes = 0;
  // Actors the I/O thread ran itself when its deliveries woke them, those
  // it gave to the CAF workers instead, and turns too long to run there.
  std::uint64_t io_turns = 0, io_handed = 0, io_heavy = 0;
  // The I/O thread's sleeps ended (wakes), eventfd rings from other
  // threads, and spins that found nothing: how often a message found it
  // asleep, the cost that `channel.polling_time` trades CPU against.
  std::uint64_t io_wakes = 0, io_doorbells = 0, io_spins = 0;
  std::uint64_t proxies = 0, exported = 0, published = 0;
};

struct node_stats {
  directory_counters node;
  // The node's memory domain (rdma): registrations and pinned bytes.
  channels::verbs::memory_domain::counters memory;
  std::vector<std::pair<std::string, connection_core::counters>> peers;
};

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::node_stats)

namespace riomesh::actors {

class exchange;

// Opens nothing: `listener` is already listening at p.node.listen. `loop`
// and `x` must outlive the actor.
caf::actor spawn_directory(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                           const directory_params& p, std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
