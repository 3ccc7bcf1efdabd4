#include "remote_target.hpp"

#include <riomesh/config/address.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/config/text.hpp>

#include <unistd.h>

#include <variant>

namespace riomesh::cli {

target find_target(const config::command_line& cmd) {
  if (cmd.positional.size() != 2)
    throw usage_error("name one node");
  target t;
  t.node = cmd.positional[1];
  if (!config::is_node_name(t.node))
    throw usage_error("'" + config::printable(t.node) + "' is not a node name (" +
                      config::node_name_rule + ")");
  auto& s = t.self;
  config::endpoint where;
  if (cmd.has("--at") == cmd.has("--config"))
    throw usage_error("say where NODE is: --config FILE or --at HOST:PORT (one of them)");
  if (cmd.has("--at")) {
    auto parsed = config::parse_endpoint(cmd.get("--at"));
    if (auto* problem = std::get_if<std::string>(&parsed))
      throw usage_error("--at " + cmd.get("--at") + ": " + *problem);
    where = std::get<config::endpoint>(parsed);
    if (cmd.has("--secret-file"))
      s.cluster.secret = read_secret_file("--secret-file", cmd.get("--secret-file"));
  } else {
    if (cmd.has("--secret-file"))
      throw usage_error("--secret-file goes with --at; --config names the file's own secret");
    config::settings file;
    try {
      file = config::load_file(cmd.get("--config"));
    } catch (const config::error& e) {
      throw usage_error("--config " + cmd.get("--config") + ":\n" + e.what());
    }
    bool found = false;
    if (file.node.name == t.node)
      where = file.node.listen, found = true;
    for (const auto& p : file.cluster.peers)
      if (p.name == t.node)
        where = p.address, found = true;
    if (!found)
      throw usage_error("--config " + cmd.get("--config") + " names no node '" + t.node +
                        "' (neither the node nor one of its peers)");
    if (where.host == "0.0.0.0" || where.host == "::")
      where.host = where.host == "::" ? "::1" : "127.0.0.1";
    s.cluster.secret = file.cluster.secret;
    s.node.fabric = file.node.fabric;
    s.node.device = file.node.device;
  }
  t.where = config::to_string(where);
  s.node.name = "riomesh-cli-" + std::to_string(::getpid());
  bool v6 = where.host.find(':') != std::string::npos;
  s.node.listen = {config::is_loopback(where) ? where.host : (v6 ? "::" : "0.0.0.0"), 0};
  // The CLI only dials out, for a moment, and exposes no more than its arena.
  s.cluster.insecure = s.cluster.secret.empty();
  s.cluster.peers = {{t.node, where}};
  s.channel.arena = 1 << 20;
  s.channel.max_pending = 16;
  s.runtime.threads = 1;
  s.logging.level = config::log_level::error;
  try {  // --fabric, --log-level, --listen and their environment variables
    s = config::apply(cmd.extra, s);
  } catch (const config::error& e) {
    throw usage_error(e.what());
  }
  return t;
}

}  // namespace riomesh::cli
