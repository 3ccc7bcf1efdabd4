// Carries a session setup's events and work between it and a channel:
// the only code of the setup that does I/O, kept this thin so that what
// is decided (session_setup.hpp) is unit-tested without a channel; this
// part runs in the integration tests, over real channels.
#pragma once

#include <riomesh/actors/connection/session_setup.hpp>
#include <riomesh/channels/channel.hpp>

namespace riomesh::actors {

// What the setup needs to know of the channel it runs over: where the
// peer is, and whether the stream can be encrypted.
session_setup::options over(channels::channel& ch, session_setup::options o);

// Reads what the peer sent, sends what the setup has to say, hands the
// stream's encryption to the channel and opens its gate once established,
// shuts it down on failure. True if anything moved.
bool drive_session(channels::channel& ch, session_setup& s);

}  // namespace riomesh::actors
