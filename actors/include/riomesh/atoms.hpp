// The atoms of riomesh's public messages (CAF 0.17 atoms: at most 10
// characters): what the runtime's actors answer and what it sends to
// applications.
#pragma once

#include <caf/atom.hpp>

namespace riomesh {

using dial_atom = caf::atom_constant<caf::atom("rm_dial")>;            // connect to a node now
using resolve_atom = caf::atom_constant<caf::atom("rm_resolve")>;      // a peer's actor by name
using writable_atom = caf::atom_constant<caf::atom("rm_wrable")>;      // a congested queue drained
using undelivered_atom = caf::atom_constant<caf::atom("rm_undeliv")>;  // a send failed
using grant_atom = caf::atom_constant<caf::atom("rm_grant")>;          // lend a peer memory
using revoke_atom = caf::atom_constant<caf::atom("rm_revoke")>;        // and take it back
using grant_done_atom = caf::atom_constant<caf::atom("rm_granted")>;   // a grant's use ended
using expose_atom = caf::atom_constant<caf::atom("rm_expose")>;        // map memory for a peer
using unexpose_atom = caf::atom_constant<caf::atom("rm_unexpos")>;     // and unmap it

}  // namespace riomesh
