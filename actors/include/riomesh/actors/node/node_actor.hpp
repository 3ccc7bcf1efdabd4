// The node actor: one per runtime, the judge of connections. It listens
// (the I/O thread says when a connection request waits), dials the
// configured peers on the redial schedule and on request (each dial on its
// own thread: connecting blocks), and makes each new connection a
// connection actor on the I/O thread (io/connection_actor.hpp) over a link
// (io/link.hpp). It never sees an application's message: the connection
// actors and the exchange carry those. It hears from the exchange when a
// link is set up, closes or drains, keeps one connection per peer (setting
// the exchange's route to it), monitors every connection actor, and
// reports to its owner:
//   (connected_atom, peer, authenticated)
//   (closed_atom, peer, reason, stopped)   a connection ended, or a dial
//                                          failed; stopped: the peer left in order
//   (writable_atom, peer)                  a congested peer drained to half
// Its interface is node_actor below; what the exchange, its dial threads
// and its timers tell it are types of its own, inside node_actor.cpp.
//
// Two nodes that dial each other at once end up with one connection: the
// one the node with the smaller name dialed.
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_params.hpp>
#include <riomesh/actors/io/connection_actor.hpp>
#include <riomesh/actors/node/redial_schedule.hpp>
#include <riomesh/actors/node/seeds.hpp>
#include <riomesh/channels/listener.hpp>
#include <riomesh/config/settings.hpp>

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>

#include <memory>
#include <string>
#include <vector>

namespace riomesh::actors {

class io_loop;
class exchange;
class connection_host;
class node_table;

struct node_params {
  config::endpoint listen;                   // port 0: any
  std::vector<config::peer_settings> peers;  // dialed, and redialed when lost
  // Dialed by address (a name may give several), whatever node answers,
  // then kept as peers by name: cluster.seeds (seeds.hpp). Resolved again
  // every seed_interval, so nodes that appear later are found.
  std::vector<config::endpoint> seeds;
  seed_resolver resolve_seeds;  // empty: the system's (resolve_by_dns)
  std::chrono::milliseconds seed_interval{5000};
  bool insecure = false;  // accept no secret beyond loopback
  // Whether tcp streams are encrypted after their handshake (auto: unless
  // the peer is on loopback).
  config::encryption encrypt = config::encryption::automatic;
  channels::channel_options channel;  // fabric, device, settings, timeout
  connection_params connection;       // node name, secret, arena, limits
  redial_schedule::limits redial;
  // A connection that ends is reported lost only if no other connection to
  // that peer is up this long after: when two nodes dial each other, one
  // connection is dropped, and its peer may see that before the other.
  std::chrono::milliseconds loss_grace{250};
  // How long stopping waits for the links to send what they have queued.
  std::chrono::milliseconds drain_limit{2000};
  // Accepted connections still setting up their session, at most (and
  // half of it from one address): see admission.hpp. Dialed connections do
  // not count.
  std::size_t max_in_setup = 64;
  // Sessions up at once and what their arenas may take (session_registry).
  session_limits sessions;
  // The node-wide table of nodes, shared with the exchange.
  std::shared_ptr<node_table> nodes;
  // Where the connections' actors run: the I/O thread (outlives the actor).
  connection_host* connections = nullptr;
};

// `loop` and `x` must outlive the actor; `listener` is already listening.
using node_actor = caf::typed_actor<
    // Connects to whatever node listens at host:port: its name, once set up.
    caf::replies_to<dial_atom, std::string, std::uint16_t>::with<std::string>,
    // Every connection actor's figures.
    caf::replies_to<stats_atom>::with<connection_list>,
    // The port it listens on.
    caf::replies_to<port_atom>::with<std::uint16_t>,
    // True once every link drained (within drain_limit) and it quit.
    caf::replies_to<stop_atom>::with<bool>>;

node_actor spawn_node(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                      const node_params& p, caf::actor owner,
                      std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
