// The node actor: one per runtime, the judge of connections. It listens
// (the I/O thread says when a connection request waits), dials the
// configured peers on the redial schedule (each dial on its own thread:
// connecting blocks), and hands each new connection to the I/O thread as a
// link (io/link.hpp). It never sees a message: the links and the exchange
// carry those. It hears from the exchange when a link is set up, closes or
// drains, keeps one link per peer (setting the exchange's route to it), and
// reports to its owner:
//   (connected_atom, peer, authenticated)
//   (closed_atom, peer, reason, stopped)   a connection ended, or a dial
//                                          failed; stopped: the peer left in order
//   (writable_atom, peer)                  a congested peer drained to half
// It takes (port_atom) -> port, (stats_atom) -> peer_counters,
// (expose_atom, peer, buffer) -> offset, (unexpose_atom, peer, offset) ->
// bool, and (stop_atom) -> true once every link drained and it quit.
//
// Two nodes that dial each other at once end up with one connection: the
// one the node with the smaller name dialed.
#pragma once

#include <riomesh/actors/connection/connection_params.hpp>
#include <riomesh/actors/node/redial_schedule.hpp>
#include <riomesh/channels/listener.hpp>
#include <riomesh/config/settings.hpp>

#include <caf/fwd.hpp>

#include <memory>
#include <string>
#include <vector>

namespace riomesh::actors {

class io_loop;
class exchange;
class node_table;

struct node_params {
  config::endpoint listen;                   // port 0: any
  std::vector<config::peer_settings> peers;  // dialed, and redialed when lost
  bool insecure = false;                     // accept no secret beyond loopback
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
};

// `loop` and `x` must outlive the actor; `listener` is already listening.
caf::actor spawn_node(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                      const node_params& p, caf::actor owner,
                      std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
