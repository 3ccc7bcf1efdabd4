// riomesh: the operator's command-line tool.
#include "config_command.hpp"
#include "options.hpp"

#include <iostream>
#include <stdexcept>
#include <string>

namespace {

const char* const usage =
    "usage: riomesh COMMAND ...\n"
    "  config show FILE    print a node's effective settings and the fabric it would use\n"
    "  config check FILE   validate a node file; errors name file, line and column\n"
    "Overrides (all commands):\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace riomesh::cli;
  if (argc > 1 && (std::string{argv[1]} == "--help" || std::string{argv[1]} == "-h")) {
    std::cout << usage << override_help;
    return 0;
  }
  command_line cmd;
  try {
    cmd = parse(argc, argv, 1);
  } catch (const std::invalid_argument& e) {
    std::cerr << "riomesh: " << e.what() << "\n" << usage << override_help;
    return 2;
  }
  if (cmd.positional.empty() || cmd.positional[0] == "help") {
    std::cout << usage << override_help;
    return cmd.positional.empty() ? 2 : 0;
  }
  if (cmd.positional[0] == "config")
    return config_command(cmd);
  std::cerr << "riomesh: unknown command '" << cmd.positional[0] << "'\n" << usage;
  return 2;
}
