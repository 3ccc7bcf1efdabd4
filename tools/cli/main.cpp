// riomesh: the operator's command-line tool. Every command takes --help and
// --version; a bad command line exits 2 naming what was wrong, before any
// network activity.
#include "arguments.hpp"
#include "config_command.hpp"
#include "devices_command.hpp"
#include "keygen_command.hpp"
#include "remote_command.hpp"

#include <riomesh/config/text.hpp>
#include <riomesh/version.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace riomesh;

std::set<std::string> with(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

const std::vector<cli::command>& commands() {
  static const std::vector<cli::command> all = {
      {"config", cli::config_usage, {"--set"}, {}, cli::config_command},
      {"keygen", cli::keygen_usage, {"--out"}, {}, cli::keygen_command},
      {"secret", cli::secret_usage, {}, {}, cli::secret_command},
      {"ping",
       cli::ping_usage,
       with(cli::target_options, {"--count", "--interval"}),
       {},
       cli::ping_command},
      {"stat",
       cli::stat_usage,
       with(cli::target_options, {"--count", "--interval"}),
       {"--watch", "--json"},
       cli::stat_command},
      {"ls", cli::ls_usage, cli::target_options, {}, cli::ls_command},
      {"devices", cli::devices_usage, {"--config"}, {}, cli::devices_command},
  };
  return all;
}

const char* const common_help = "Every command: --help, --version, and the overrides\n";

void usage(std::ostream& out) {
  out << "usage: riomesh COMMAND [ARGS] [OPTIONS]\n";
  for (const auto& c : commands())
    out << c.usage;
  out << cli::target_usage << common_help << config::override_help;
}

void command_usage(const cli::command& c, std::ostream& out) {
  out << "usage: riomesh\n" << c.usage;
  if (c.valued.count("--at"))
    out << cli::target_usage;
  out << common_help << config::override_help;
}

bool asks(int argc, char** argv, const char* a, const char* b = nullptr) {
  for (int i = 1; i < argc; ++i)
    if (std::string{argv[i]} == a || (b && std::string{argv[i]} == b))
      return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--version" || name == "version") {
    std::cout << "riomesh " << riomesh::version << "\n";
    return 0;
  }
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return 0;
  }
  const cli::command* chosen = nullptr;
  for (const auto& c : commands())
    if (name == c.name)
      chosen = &c;
  if (!chosen) {
    std::cerr << "riomesh: unknown command '" << config::printable(name) << "'\n";
    usage(std::cerr);
    return 2;
  }
  if (asks(argc, argv, "--help", "-h")) {
    command_usage(*chosen, std::cout);
    return 0;
  }
  if (asks(argc, argv, "--version")) {
    std::cout << "riomesh " << riomesh::version << "\n";
    return 0;
  }
  try {
    auto cmd = config::parse_command_line(argc, argv, 1, chosen->valued, chosen->flags);
    return chosen->run(cmd);
  } catch (const std::invalid_argument& e) {  // the command line's own words
    std::cerr << "riomesh " << name << ": " << e.what() << "\n";
  } catch (const cli::usage_error& e) {
    std::cerr << "riomesh " << name << ": " << e.what() << "\n";
  } catch (const std::exception& e) {  // the machine or the node, not the usage
    std::cerr << "riomesh " << name << ": " << e.what() << "\n";
    return 1;
  }
  std::cerr << "(riomesh " << name << " --help shows how to use it)\n";
  return 2;
}
