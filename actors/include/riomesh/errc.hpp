// What can go wrong between actors on different nodes, as CAF errors of the
// category "riomesh" (the runtime registers a renderer, so
// system.render(err) reads "riomesh: not_published (name 'x' on node 'b')").
// The context string says which node, name, peer or frame.
#pragma once

#include <caf/error.hpp>

#include <cstdint>
#include <string>

namespace riomesh {

enum class errc : std::uint8_t {
  unknown_node = 1,    // not in the cluster config, and never connected
  not_connected,       // configured, but no connection came up in time
  not_published,       // the node has no actor under that name
  interface_mismatch,  // the published actor's typed interface differs
  encode_failure,      // a message type cannot be serialized (unregistered?)
  decode_failure,      // the peer's message could not be read
  node_lost,           // the connection to the node ended
  actor_exited,        // the remote actor is gone
  congested,           // the peer's outbound queue is full: try later
  too_large,           // the message exceeds what the peer accepts
  stopped,             // this runtime is shutting down
  timeout,             // no answer in time
  not_mapped,          // a direct write found no map at that offset on the peer
  refused,             // the receiving node refused the message (a CAF system message)
};

const char* to_string(errc e);

caf::atom_value error_category();
caf::error make_error(errc e, std::string context);
// Whether `err` is `e` of the riomesh category.
bool is(const caf::error& err, errc e);
// The renderer the runtime registers for the category.
std::string render_error(std::uint8_t code, caf::atom_value, const caf::message& context);

}  // namespace riomesh
