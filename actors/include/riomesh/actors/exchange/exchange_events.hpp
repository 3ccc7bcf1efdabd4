// What the exchange tells the node's own actors. It holds their handles as
// these types, so the compiler checks each of its tells against what the
// actor takes (node_actor.cpp, directory_actor.cpp extend their interfaces
// with them).
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace riomesh::actors {

class link;

// To the node actor: a link set up, closed (id, reason, stopped: in
// order), writable again; and a node a peer named (name, host, port).
using node_events =
    caf::typed_actor<caf::reacts_to<connected_atom, std::shared_ptr<link>>,
                     caf::reacts_to<closed_atom, std::uint64_t, std::string, bool>,
                     caf::reacts_to<writable_atom, std::uint64_t>,
                     caf::reacts_to<dial_atom, std::string, std::string, std::uint16_t>>;

// To the directory: a peer's answer to a lookup (peer, lookup id, actor id
// or 0, interface).
using directory_events = caf::typed_actor<
    caf::reacts_to<resolved_atom, std::string, std::uint64_t, std::uint64_t, std::string>>;

}  // namespace riomesh::actors
