// The connection actor's message payloads are local-only (they hold
// buffers and channel-side structures): CAF may pass them between actors
// of one node, never serialize them.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <caf/allowed_unsafe_message_type.hpp>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::outbound_message)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::inbound_message)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::connection_core::counters)
