#include "options.hpp"

#include <stdexcept>

namespace riomesh::cli {

const char* const override_help =
    "  --listen HOST:PORT   node.listen      (env RIOMESH_LISTEN)\n"
    "  --fabric auto|verbs|tcp  node.fabric  (env RIOMESH_FABRIC)\n"
    "  --log-level LEVEL    logging.level    (env RIOMESH_LOG_LEVEL)\n"
    "Command-line values win over the environment, which wins over the file.\n";

command_line parse(int argc, char** argv, int first) {
  command_line out;
  out.extra = config::overrides::from_environment();
  config::overrides cli;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<config::override_value>* slot = nullptr;
    std::string name = arg.substr(0, arg.find('='));
    if (name == "--listen")
      slot = &cli.listen;
    else if (name == "--fabric")
      slot = &cli.fabric;
    else if (name == "--log-level")
      slot = &cli.log_level;
    else if (arg.size() > 1 && arg[0] == '-')
      throw std::invalid_argument("unknown option '" + arg + "'");
    if (!slot) {
      out.positional.push_back(arg);
      continue;
    }
    std::string value;
    if (name.size() < arg.size())
      value = arg.substr(name.size() + 1);
    else if (i + 1 < argc)
      value = argv[++i];
    else
      throw std::invalid_argument("option '" + name + "' needs a value");
    *slot = config::override_value{value, name};
  }
  out.extra.merge(cli);
  return out;
}

}  // namespace riomesh::cli
