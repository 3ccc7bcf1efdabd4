#include <riomesh/config/command_line.hpp>

#include <optional>
#include <stdexcept>

namespace riomesh::config {

const char* const override_help =
    "  --listen HOST:PORT   node.listen      (env RIOMESH_LISTEN)\n"
    "  --fabric auto|verbs|tcp  node.fabric  (env RIOMESH_FABRIC)\n"
    "  --log-level LEVEL    logging.level    (env RIOMESH_LOG_LEVEL)\n"
    "  --setting SECTION.KEY=VALUE[;...]  any key of the file, e.g.\n"
    "                       channel.peer_timeout=15s (env RIOMESH_SETTINGS)\n"
    "Command-line values win over the environment, which wins over the file.\n";

command_line parse_command_line(int argc, char** argv, int first,
                                const std::set<std::string>& valued,
                                const std::set<std::string>& flags) {
  command_line out;
  out.extra = overrides::from_environment();
  overrides cli;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name = arg.substr(0, arg.find('='));
    std::optional<override_value>* slot = nullptr;
    if (name == "--listen")
      slot = &cli.listen;
    else if (name == "--fabric")
      slot = &cli.fabric;
    else if (name == "--log-level")
      slot = &cli.log_level;
    bool setting = name == "--setting";
    if (flags.count(arg)) {
      out.options[arg] = "";
      continue;
    }
    bool own = valued.count(name) != 0;
    if (!slot && !own && !setting) {
      if (arg.size() > 1 && arg[0] == '-')
        throw std::invalid_argument("unknown option '" + arg + "'");
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
    if (setting)
      cli.add_settings(value, name);
    else if (own)
      out.options[name] = value;
    else
      *slot = override_value{value, name};
  }
  out.extra.merge(cli);
  return out;
}

}  // namespace riomesh::config
