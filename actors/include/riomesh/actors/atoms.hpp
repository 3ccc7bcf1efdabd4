// The atoms riomesh's actors speak (CAF 0.17 atoms: at most 10 characters).
#pragma once

#include <caf/atom.hpp>

namespace riomesh::actors {

using connected_atom = caf::atom_constant<caf::atom("rm_up")>;         // setup done
using closed_atom = caf::atom_constant<caf::atom("rm_closed")>;        // the connection ended
using stats_atom = caf::atom_constant<caf::atom("rm_stats")>;          // counters, please
using tick_atom = caf::atom_constant<caf::atom("rm_tick")>;            // time for the timers
using accept_atom = caf::atom_constant<caf::atom("rm_accept")>;        // a connection request waits
using dialed_atom = caf::atom_constant<caf::atom("rm_dialed")>;        // a dial attempt ended
using redial_atom = caf::atom_constant<caf::atom("rm_redial")>;        // peers may be due
using loss_atom = caf::atom_constant<caf::atom("rm_loss")>;            // was that peer really lost?
using port_atom = caf::atom_constant<caf::atom("rm_port")>;            // the port we listen on
using writable_atom = caf::atom_constant<caf::atom("rm_wrable")>;      // a congested queue drained
using publish_atom = caf::atom_constant<caf::atom("rm_publish")>;      // name an actor for peers
using resolve_atom = caf::atom_constant<caf::atom("rm_resolve")>;      // a peer's actor by name
using resolved_atom = caf::atom_constant<caf::atom("rm_rslvd")>;       // a peer's answer for a name
using timeout_atom = caf::atom_constant<caf::atom("rm_timeout")>;      // a wait is over
using notify_atom = caf::atom_constant<caf::atom("rm_notify")>;        // tell me when writable
using stop_atom = caf::atom_constant<caf::atom("rm_stop")>;            // drain and end
using expose_atom = caf::atom_constant<caf::atom("rm_expose")>;        // map memory for a peer
using unexpose_atom = caf::atom_constant<caf::atom("rm_unexpos")>;     // and unmap it
using undelivered_atom = caf::atom_constant<caf::atom("rm_undeliv")>;  // a send failed
using dial_atom = caf::atom_constant<caf::atom("rm_dial")>;            // connect to a node now
using trim_atom = caf::atom_constant<caf::atom("rm_trim")>;            // give back idle memory
using grant_atom = caf::atom_constant<caf::atom("rm_grant")>;          // lend a peer memory
using revoke_atom = caf::atom_constant<caf::atom("rm_revoke")>;        // and take it back
using grant_read_atom = caf::atom_constant<caf::atom("rm_gread")>;     // read a peer's grant
using grant_done_atom = caf::atom_constant<caf::atom("rm_granted")>;   // a grant's use ended

}  // namespace riomesh::actors
