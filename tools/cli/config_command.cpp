// `riomesh config show FILE` and `riomesh config check FILE`.
#include "config_command.hpp"

#include <riomesh/channels/fabric_choice.hpp>
#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/config/print.hpp>

#include <iostream>

namespace riomesh::cli {
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
  if (cmd.positional.size() != 3 || (cmd.positional[1] != "show" && cmd.positional[1] != "check")) {
    std::cerr << "usage: riomesh config show|check FILE [overrides]\n";
    return 2;
  }
  const auto& path = cmd.positional[2];
  try {
    auto s = config::load_file(path, cmd.extra);
    if (cmd.positional[1] == "check") {
      std::cout << path << ": ok\n";
      return 0;
    }
    std::cout << "# effective settings of node '" << s.node.name << "' from " << path
              << " (file < environment < command line)\n"
              << config::to_yaml(s);
    show_fabric(s);
    return 0;
  } catch (const config::error& e) {
    std::cerr << e.what() << "\n"
              << path << ": " << e.problems().size() << " error"
              << (e.problems().size() == 1 ? "" : "s") << "; the node would not start\n";
    return 1;
  }
}

}  // namespace riomesh::cli
