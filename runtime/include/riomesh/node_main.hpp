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
#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/overrides.hpp>

#include <string>
#include <utility>
#include <vector>

namespace riomesh {

int node_main(int argc, char** argv, const actor_registry& types);

// A node file read and checked whole: its settings (overrides applied) and
// the actors it lists, their parameters read.
struct node_plan {
  config::settings settings;
  std::vector<std::pair<config::actor_spec, actor_registry::spawner>> actors;
};

// What riomesh-node --check and `riomesh config check` both do: reads FILE,
// applies `extra` and the --set items (`sets`: ACTOR.KEY=VALUE,...), and
// reads every actor entry's parameters. Throws config::error with every
// problem, the file's in line order.
node_plan check_node(const std::string& path, const config::overrides& extra,
                     const std::string& sets, const actor_registry& types);

// A check's verdict, worded alike by every program: "FILE: ok (node 'n', 2
// actors)" on stdout; or each problem, then "FILE: 3 problems; the node
// would not start" on stderr.
void print_check_ok(const std::string& path, const node_plan& plan);
void print_check_problems(const std::string& path, const config::error& e,
                          const char* verdict = "the node would not start");

}  // namespace riomesh
