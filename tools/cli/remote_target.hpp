// How the riomesh command reaches a node: NODE named in a cluster file
// (--config) or at an address (--at, --secret-file), and the CLI's own
// short-lived node that dials it.
#pragma once

#include "arguments.hpp"

#include <riomesh/runtime.hpp>

#include <caf/actor.hpp>

#include <iostream>
#include <string>

namespace riomesh::cli {

struct target {
  std::string node;
  std::string where;      // NODE's address, for messages
  config::settings self;  // the CLI's own node, with NODE as its one peer
};

// Checks the arguments and reads the files they name; usage_error if any
// is wrong. Nothing touches the network yet.
target find_target(const config::command_line& cmd);

// Starts the CLI's node, finds NODE's admin actor and runs body(rt, admin);
// 1 (said on stderr) if NODE does not answer.
template <class F>
int with_admin(const target& t, F body) {
  runtime rt{t.self};
  auto admin = rt.remote_actor<admin_actor>(t.node, admin_name, std::chrono::seconds(5));
  if (!admin) {
    std::cerr << "riomesh: node '" << t.node << "' at " << t.where
              << " does not answer: " << rt.system().render(admin.error()) << "\n";
    return 1;
  }
  return body(rt, *admin);
}

}  // namespace riomesh::cli
