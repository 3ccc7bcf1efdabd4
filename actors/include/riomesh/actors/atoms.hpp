// The atoms riomesh's actors speak among themselves (CAF 0.17 atoms: at
// most 10 characters), and the public ones (riomesh/atoms.hpp).
#pragma once

#include <riomesh/atoms.hpp>

#include <caf/atom.hpp>

namespace riomesh::actors {

using riomesh::dial_atom;
using riomesh::expose_atom;
using riomesh::grant_atom;
using riomesh::grant_done_atom;
using riomesh::resolve_atom;
using riomesh::revoke_atom;
using riomesh::undelivered_atom;
using riomesh::unexpose_atom;
using riomesh::writable_atom;

using connected_atom = caf::atom_constant<caf::atom("rm_up")>;  // setup done
using closed_atom = caf::atom_constant<caf::atom("rm_closed")>;
// A dialed address holds another node than the one meant: what waits for
// the one meant fails at once (asking again there gets the same answer).
using wrong_node_atom = caf::atom_constant<caf::atom("rm_wrongnd")>;
using seed_atom = caf::atom_constant<caf::atom("rm_seed")>;         // the connection ended
using stats_atom = caf::atom_constant<caf::atom("rm_stats")>;       // counters, please
using tick_atom = caf::atom_constant<caf::atom("rm_tick")>;         // time for the timers
using accept_atom = caf::atom_constant<caf::atom("rm_accept")>;     // a connection request waits
using redial_atom = caf::atom_constant<caf::atom("rm_redial")>;     // peers may be due
using loss_atom = caf::atom_constant<caf::atom("rm_loss")>;         // was that peer really lost?
using port_atom = caf::atom_constant<caf::atom("rm_port")>;         // the port we listen on
using publish_atom = caf::atom_constant<caf::atom("rm_publish")>;   // name an actor for peers
using unpublish_atom = caf::atom_constant<caf::atom("rm_unpub")>;   // the name is free again
using resolved_atom = caf::atom_constant<caf::atom("rm_rslvd")>;    // a peer's answer for a name
using timeout_atom = caf::atom_constant<caf::atom("rm_timeout")>;   // a wait is over
using notify_atom = caf::atom_constant<caf::atom("rm_notify")>;     // tell me when writable
using stop_atom = caf::atom_constant<caf::atom("rm_stop")>;         // drain and end
using trim_atom = caf::atom_constant<caf::atom("rm_trim")>;         // give back idle memory
using grant_read_atom = caf::atom_constant<caf::atom("rm_gread")>;  // read a peer's grant
using drain_atom = caf::atom_constant<caf::atom("rm_drain")>;       // send what waits, then end
using close_atom = caf::atom_constant<caf::atom("rm_close")>;       // end now, without a word
using evict_atom = caf::atom_constant<caf::atom("rm_evict")>;       // end, if still setting up

}  // namespace riomesh::actors
