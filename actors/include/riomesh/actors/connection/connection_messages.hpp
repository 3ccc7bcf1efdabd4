// Payloads the node's own actors pass among themselves (they hold links
// and counters): CAF may pass them between actors of one node, never
// serialize them.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <string>
#include <utility>
#include <vector>

namespace riomesh::actors {
// Each connected peer's counters, as the node actor answers (stats_atom).
using peer_counters = std::vector<std::pair<std::string, connection_core::counters>>;
}  // namespace riomesh::actors

#include <caf/allowed_unsafe_message_type.hpp>

namespace riomesh::actors {
class link;
}
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<riomesh::actors::link>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::connection_core::counters)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::peer_counters)
