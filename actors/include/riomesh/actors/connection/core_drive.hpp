// Carries a connection core's stream and events to its channel: the only
// code of the core that reads or sends stream bytes, kept this thin so
// that what is decided (connection_core.hpp) can be driven in memory; this
// part runs in the integration tests, over real channels.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/channels/channel.hpp>

namespace riomesh::actors {

// Hands the channel's events to the core, then what the peer sent; tells
// it when the stream ended or the channel closed; lets it start fetches,
// report releases and size its arena; sends its messages one after another
// while the channel takes them; shuts the channel down once the core
// failed. True if anything moved.
bool drive_core(channels::channel& ch, connection_core& core,
                connection_core::clock::time_point now = connection_core::clock::now());

}  // namespace riomesh::actors
