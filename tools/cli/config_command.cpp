// `riomesh config show FILE` and `riomesh config check FILE`.
#include "config_command.hpp"

#include "arguments.hpp"

#include <riomesh/channels/fabric_choice.hpp>
#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/print.hpp>
#include <riomesh/node_main.hpp>

#include <pubsub.hpp>

#include <iostream>

namespace riomesh::cli {

const char* const config_usage =
    "  config check FILE [--set ACTOR.KEY=VALUE,...]\n"
    "                       check a node file as riomesh-node --check does: every key,\n"
    "                       every actor entry and its parameters; every problem at once,\n"
    "                       with file, line and column\n"
    "  config show FILE     a node's effective settings and the fabric it would use\n";

namespace {

void show_fabric(const config::settings& s) {
  auto devices = channels::probe_rdma_devices();
  std::cout << "# RDMA devices: ";
  if (devices.empty())
    std::cout << "none";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    std::cout << (i ? ", " : "") << d.name << " (" << channels::to_string(d.transport)
              << (d.active_port ? ", active port " + std::to_string(d.active_port)
                                : std::string{", no active port"})
              << ")";
  }
  auto choice = channels::choose_fabric(s.node, devices);
  std::cout << "\n# fabric: " << (choice.ok ? "" : "cannot start: ") << choice.reason << "\n";
}

}  // namespace

int config_command(const config::command_line& cmd) {
  if (cmd.positional.size() != 3 || (cmd.positional[1] != "show" && cmd.positional[1] != "check"))
    throw usage_error("expected 'config check FILE' or 'config show FILE'");
  const auto& path = cmd.positional[2];
  // The actor types riomesh-node knows (the pub/sub example's).
  actor_registry types;
  pubsub::add_types(types);
  try {
    auto plan = check_node(path, cmd.extra, cmd.get("--set"), types);
    if (cmd.positional[1] == "check") {
      print_check_ok(path, plan);
      return 0;
    }
    std::cout << "# effective settings of node '" << plan.settings.node.name << "' from " << path
              << " (file < environment < command line)\n"
              << config::to_yaml(plan.settings);
    show_fabric(plan.settings);
    return 0;
  } catch (const config::error& e) {
    print_check_problems(path, e);
    return 1;
  }
}

}  // namespace riomesh::cli
