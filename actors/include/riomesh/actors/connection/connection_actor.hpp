// The connection actor: one per peer, a thin shell over session_setup and
// connection_core. It owns the channel; the progress loop tells it when the
// channel's fd has something (pump), and it reports to its owner:
//   (connected_atom, peer name, authenticated, replaces, incarnation)
//                                        replaces: the peer proved a restart
//                                        with its key, and this session takes
//                                        the old one's place; incarnation: the
//                                        peer's run (session_setup.hpp)
//   (closed_atom, reason, peer_stopped)  once, then it quits; peer_stopped:
//                                        the peer ended its stream in order
//   (writable_atom)                      a send was refused as congested,
//                                        and the queue has drained to half
// Inbound messages wait until the owner keeps the connection, by sending it
// (route_atom, actor): from then on each goes straight to that actor as
// (inbound_atom, peer name, inbound_message), in order, without passing
// through the owner. It takes (outbound_atom, outbound_message) requests, answered with the
// queue depth or a riomesh error (errc::congested, too_large, node_lost):
// never a silent drop. Messages sent before setup finishes wait, within max_pending.
// A session not set up within params.setup_limit is ended in band (the
// peer reads an end, not a failure) and closed, with that reason.
// (stop_atom, reason) ends a connection still in setup with that reason.
// (stats_atom) answers with the connection_core::counters. (stop_atom)
// drains: no new sends, the queue goes out, the channel shuts down
// cleanly; answered with true once closed (the owner bounds the wait). It runs the
// channel's timers every params.tick, so it lives until it closes or is
// told to exit: its owner must do one or the other.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/connection/session_setup.hpp>

#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace riomesh::actors {

class progress_loop;

struct connection_params {
  std::string node_name;
  credentials creds;  // the secret and node keys
  bool allow_unauthenticated = false;
  // Random per start of the node, told in the session terms: how a peer
  // tells a restarted node from the one it had a session with.
  std::uint64_t incarnation = 0;
  // Node-wide live sessions (session_registry.hpp); null: every session is
  // granted. `dialed`: this side dialed (it does not decide).
  std::shared_ptr<session_registry> sessions;
  bool dialed = false;
  std::uint64_t arena_size = 64ull << 20;
  std::uint32_t max_body = 1u << 20;
  std::uint16_t max_buffers = 256;
  std::size_t max_pending = 1024;
  std::uint64_t max_streamed = 4ull << 30;  // buffers beyond the peer's arena, in all
  std::uint32_t max_streams = 8;            // and how many at once
  release_batch::limits releases;
  // How often the channel's timers run (keepalive, peer timeout): a few
  // times per keepalive interval.
  std::chrono::milliseconds tick{250};
  // A peer that has not finished the session setup by then is no node (or
  // is a client holding the connection open): it is closed.
  std::chrono::milliseconds setup_limit{10000};
  // This node declares a silent peer lost after this (0: never), and tells
  // peers so in its terms.
  std::chrono::milliseconds peer_timeout{5000};
};

// `loop` must outlive the actor (and so the actor system: destroy the
// system first); `owner` gets the reports above.
caf::actor spawn_connection(caf::actor_system& sys, std::shared_ptr<channels::channel> ch,
                            progress_loop& loop, const connection_params& p, caf::actor owner);

}  // namespace riomesh::actors
