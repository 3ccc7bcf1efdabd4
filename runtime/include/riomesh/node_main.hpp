// A whole node program, the way riomesh-node runs one:
//
//   PROGRAM --config FILE [--check] [--list-types] [--set A.K=V,...] [overrides]
//
// loads and checks FILE (every problem, with file and line), starts the
// runtime, spawns and publishes the actors FILE lists by registered type,
// and runs until SIGINT or SIGTERM, then stops the actors and drains the
// connections. --check reads FILE and the actors' parameters and starts
// nothing. Returns the exit code: 0 after a clean stop, 1 when the node
// cannot start (the reason on stderr), 2 for a bad command line.
#pragma once

#include <riomesh/actor_registry.hpp>

namespace riomesh {

int node_main(int argc, char** argv, const actor_registry& types);

}  // namespace riomesh
