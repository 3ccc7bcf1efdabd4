// The node actor: one per runtime. It listens (the progress loop says when
// a connection request waits), dials the configured peers on the redial
// schedule (each dial on its own thread: connecting blocks), and owns one
// connection actor per peer. It reports to its owner:
//   (route_atom, peer, connection)         the connection now kept to the
//                                          peer, or an invalid handle: none
//   (connected_atom, peer, authenticated)
//   (closed_atom, peer, reason, stopped)   a connection ended, or a dial
//                                          failed; stopped: the peer left in order
//   (writable_atom, peer)                  a congested peer drained to half
// The kept connection sends its (inbound_atom, peer, inbound_message) to
// the owner itself, and the owner may send its (outbound_atom,
// outbound_message) requests to the route directly: no hop through here.
// It takes (outbound_atom, peer, outbound_message) requests too, answered as
// the connection answers, or with errc::unknown_node / not_connected;
// (port_atom) answers the port it listens on, (stats_atom) each connected
// peer's counters (peer_counters), (stop_atom) drains every connection
// and quits, answering true when done.
//
// Two nodes that dial each other at once end up with one connection: the
// one the node with the smaller name dialed.
#pragma once

#include <riomesh/actors/connection/connection_actor.hpp>
#include <riomesh/actors/node/redial_schedule.hpp>
#include <riomesh/channels/listener.hpp>
#include <riomesh/config/settings.hpp>

#include <caf/fwd.hpp>

#include <memory>

#include <string>
#include <vector>

namespace riomesh::actors {

struct node_params {
  config::endpoint listen;                   // port 0: any
  std::vector<config::peer_settings> peers;  // dialed, and redialed when lost
  bool insecure = false;                     // accept no secret beyond loopback
  channels::channel_options channel;         // fabric, device, settings, timeout
  connection_params connection;              // node name, secret, arena, limits
  redial_schedule::limits redial;
  // A connection that ends is reported lost only if no other connection to
  // that peer is up this long after: when two nodes dial each other, one
  // connection is dropped, and its peer may see that before the other.
  std::chrono::milliseconds loss_grace{250};
  // How long stopping waits for each connection to send what it has queued.
  std::chrono::milliseconds drain_limit{2000};
  // Accepted connections still setting up their session, at most (and
  // half of it from one address): a newcomer beyond it closes the oldest,
  // so a flood of clients that never authenticate takes neither every
  // descriptor nor every slot from a peer that authenticates promptly.
  // Dialed connections do not count.
  std::size_t max_in_setup = 64;
};

// Throws std::runtime_error naming the address if it cannot listen.
caf::actor spawn_node(caf::actor_system& sys, progress_loop& loop, const node_params& p,
                      caf::actor owner);
// With a listener already open at p.listen.
caf::actor spawn_node(caf::actor_system& sys, progress_loop& loop, const node_params& p,
                      caf::actor owner, std::shared_ptr<channels::listener> listener);

}  // namespace riomesh::actors
