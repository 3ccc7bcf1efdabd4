// The atoms riomesh's actors speak (CAF 0.17 atoms: at most 10 characters).
#pragma once

#include <caf/atom.hpp>

namespace riomesh::actors {

using pump_atom = caf::atom_constant<caf::atom("rm_pump")>;      // something to do
using outbound_atom = caf::atom_constant<caf::atom("rm_out")>;   // a message to send
using inbound_atom = caf::atom_constant<caf::atom("rm_in")>;     // a message arrived
using connected_atom = caf::atom_constant<caf::atom("rm_up")>;   // setup done
using closed_atom = caf::atom_constant<caf::atom("rm_closed")>;  // the connection ended
using stats_atom = caf::atom_constant<caf::atom("rm_stats")>;    // counters, please
using tick_atom = caf::atom_constant<caf::atom("rm_tick")>;      // time for the timers
using accept_atom = caf::atom_constant<caf::atom("rm_accept")>;  // a connection request waits
using dialed_atom = caf::atom_constant<caf::atom("rm_dialed")>;  // a dial attempt ended
using redial_atom = caf::atom_constant<caf::atom("rm_redial")>;  // peers may be due
using loss_atom = caf::atom_constant<caf::atom("rm_loss")>;      // was that peer really lost?
using port_atom = caf::atom_constant<caf::atom("rm_port")>;      // the port we listen on

}  // namespace riomesh::actors
