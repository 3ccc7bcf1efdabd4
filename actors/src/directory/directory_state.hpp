// The directory actor's state, shared by its files: the actor and its
// lifecycle (directory_actor.cpp), and the translation between actor
// messages and envelopes (directory_wire.cpp).
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/directory/directory.hpp>
#include <riomesh/actors/directory/export_table.hpp>
#include <riomesh/actors/directory/pending_table.hpp>
#include <riomesh/actors/directory/remote_proxy.hpp>

#include <caf/actor_control_block.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <map>
#include <set>

namespace riomesh::actors {

struct directory_state {
  // A request sent through a proxy, until its response (or error) comes.
  struct request_wait {
    caf::strong_actor_ptr requester;
    caf::message_id mid;
    caf::strong_actor_ptr proxy;
  };
  // remote_actor() asking a peer for a name.
  struct resolve_wait {
    caf::response_promise rp;
    std::string name;
    bool sent = false;  // false: waiting for the peer to connect
  };

  directory_params params;
  caf::actor node;
  std::set<std::string> configured;
  std::set<std::string> connected;
  // The connection actor the node keeps to each peer: envelopes go to it
  // straight, not through the node.
  std::map<std::string, caf::actor> routes;
  std::map<std::string, std::string> last_failure;  // why the peer is not connected
  export_table<caf::strong_actor_ptr, caf::weak_actor_ptr> exports;
  // Held strongly, so a remote actor keeps one identity here (one proxy,
  // one address) until it exits or its node is lost.
  std::map<std::pair<std::string, std::uint64_t>, caf::strong_actor_ptr> proxies;
  pending_table<request_wait> requests;
  pending_table<resolve_wait> resolves;
  std::map<std::string, std::vector<caf::actor>> writable_waiters;
  std::set<std::string> congested;  // refused a send, not yet drained
  directory_counters counters;
  bool stopping = false;
  static const char* name;
};

using directory_ptr = caf::stateful_actor<directory_state>*;

// This node's name, for log lines and error contexts.
inline const std::string& me(directory_ptr self) {
  return self->state.params.node.connection.node_name;
}

// directory_wire.cpp
void forward(directory_ptr self, forwarded& f);
void on_inbound(directory_ptr self, const std::string& peer, inbound_message& m);
void send_resolve(directory_ptr self, const std::string& peer, std::uint64_t id,
                  const std::string& name);
// A direct write into `peer`'s own map at `offset`; `notify` hears of a
// failure as (undelivered_atom, peer, error).
void place(directory_ptr self, const std::string& peer, std::uint64_t offset, buffer&& data,
           const caf::strong_actor_ptr& notify);
void send_down(directory_ptr self, const std::string& peer, std::uint64_t id,
               const std::string& reason);

// directory_actor.cpp
caf::strong_actor_ptr proxy_for(directory_ptr self, const std::string& peer, std::uint64_t id);
void kill_proxy(directory_ptr self, const std::string& peer, std::uint64_t id,
                const caf::error& why);
void watch_export(directory_ptr self, const caf::strong_actor_ptr& who, const std::string& peer);
// Answers a request with an error, as if from `from`.
void fail_request(directory_ptr self, const directory_state::request_wait& w, caf::error why);

}  // namespace riomesh::actors
