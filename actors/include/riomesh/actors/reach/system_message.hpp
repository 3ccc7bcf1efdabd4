// CAF 0.17 acts on some message contents itself instead of passing them to
// an actor's behavior: an exit_msg or a lone error can stop the actor, a
// down_msg or timeout_msg feeds its handlers, a sys_atom message is
// answered by CAF, stream messages drive its stream machinery. From the
// wire they would let any peer stop or confuse any actor it can address,
// so riomesh delivers none of them: links and monitors across nodes are
// riomesh's own, and it produces their exit and down messages locally.
#pragma once

#include <caf/fwd.hpp>

namespace riomesh::actors {

// The CAF system message `m` is ("exit_msg", ...), or null if it is none.
const char* system_message_kind(const caf::message& m);

}  // namespace riomesh::actors
