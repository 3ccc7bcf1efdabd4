// A connection as the node's actors see it: a CAF actor that owns one link
// (io/link.hpp: the channel, the session setup, the core and its credits)
// and runs on its node's I/O thread (connection_host.hpp), never anywhere
// else. Its mailbox is the one outbound hand-off: link::submit() puts a
// sender's message there, and the actor gives it to the link on the I/O
// thread. Its interface for the rest:
//   (stats_atom) -> connection_figures   what it is and what it did
//   (drain_atom)                 send what is queued, say farewell, end
//   (close_atom, reason)         end now, without a word
//   (evict_atom, reason)         end, if its session is still being set up
// It ends when its link does; its monitors' down message carries why
// (errc::stopped: this node drained it or the peer left in order;
// errc::node_lost: anything else).
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/stats.hpp>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace riomesh::actors {

class connection_host;
class link;

struct connection_figures {
  std::uint64_t actor = 0;  // the connection actor's id
  std::uint64_t id = 0;     // its link's
  std::string peer;         // the node, once its session is up
  std::string remote;       // the address it comes from
  std::string phase;        // "setting up", "up", "draining", ..., "closed"
  bool dialed = false;
  bool routed = false;  // the node routes its peer's messages through it
  connection_counters counters;
};

// Every connection's figures, as the node actor answers (stats_atom).
using connection_list = std::vector<connection_figures>;

using connection_actor =
    caf::typed_actor<caf::replies_to<stats_atom>::with<connection_figures>,
                     caf::reacts_to<drain_atom>, caf::reacts_to<close_atom, std::string>,
                     caf::reacts_to<evict_atom, std::string>>;

// The actor of `l`, bound to it; it starts once the I/O thread has
// adopted the link (io_loop::adopt) and a message comes.
connection_actor spawn_connection(caf::actor_system& sys, connection_host& host,
                                  const std::shared_ptr<link>& l);

// "setting up", "up", ...: a link's phase, for people.
const char* phase_name(std::uint8_t phase);

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::connection_figures)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::connection_list)
