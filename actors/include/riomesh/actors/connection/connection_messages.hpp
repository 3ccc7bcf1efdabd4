// The connection actor's message payloads are local-only (they hold
// buffers and channel-side structures): CAF may pass them between actors
// of one node, never serialize them.
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

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::outbound_message)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::inbound_message)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::connection_core::counters)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::peer_counters)
