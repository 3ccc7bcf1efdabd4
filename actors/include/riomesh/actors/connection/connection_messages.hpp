// Payloads the node's own actors pass among themselves (they hold links
// and counters): CAF may pass them between actors of one node, never
// serialize them.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <string>
#include <utility>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

namespace riomesh::actors {
class link;
}
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<riomesh::actors::link>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::connection_core::counters)
