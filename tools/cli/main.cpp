// riomesh: the operator's command-line tool.
#include "config_command.hpp"
#include "keygen_command.hpp"
#include "remote_command.hpp"

#include <riomesh/config/command_line.hpp>

#include <iostream>
#include <stdexcept>
#include <string>

namespace {

void usage(std::ostream& out) {
  out << "usage: riomesh COMMAND ...\n"
         "  config show FILE    print a node's effective settings and the fabric it would use\n"
         "  config check FILE   validate a node file; errors name file, line and column\n"
      << riomesh::cli::keygen_usage << riomesh::cli::remote_usage << "Overrides (all commands):\n"
      << riomesh::config::override_help;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace riomesh;
  if (argc > 1 && (std::string{argv[1]} == "--help" || std::string{argv[1]} == "-h")) {
    usage(std::cout);
    return 0;
  }
  config::command_line cmd;
  try {
    auto options = cli::remote_options;
    options.insert("--out");
    cmd = config::parse_command_line(argc, argv, 1, options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "riomesh: " << e.what() << "\n";
    usage(std::cerr);
    return 2;
  }
  if (cmd.positional.empty() || cmd.positional[0] == "help") {
    usage(cmd.positional.empty() ? std::cerr : std::cout);
    return cmd.positional.empty() ? 2 : 0;
  }
  const auto& what = cmd.positional[0];
  if (what == "config")
    return cli::config_command(cmd);
  if (what == "keygen")
    return cli::keygen_command(cmd);
  if (what == "ping")
    return cli::ping_command(cmd);
  if (what == "stat")
    return cli::stat_command(cmd);
  std::cerr << "riomesh: unknown command '" << what << "'\n";
  usage(std::cerr);
  return 2;
}
