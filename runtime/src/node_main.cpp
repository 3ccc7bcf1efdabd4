#include <riomesh/node_main.hpp>

#include <riomesh/config/address.hpp>
#include <riomesh/config/command_line.hpp>
#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/log.hpp>

#include <caf/actor.hpp>
#include <caf/send.hpp>

#include <signal.h>

#include <iostream>
#include <stdexcept>

namespace riomesh {
namespace {

void usage(const char* program, std::ostream& out) {
  out << "usage: " << program << " --config FILE [--check] [--list-types] [overrides]\n"
      << "  --config FILE   the node file: node, cluster, channel, runtime, logging, actors\n"
      << "  --check         read FILE and its actors' parameters, start nothing\n"
      << "  --list-types    the actor types this program can spawn\n"
      << "  --set ACTOR.KEY=VALUE[,...]  an actor parameter for this run\n"
      << "Overrides:\n"
      << config::override_help;
}

// --set ACTOR.KEY=VALUE[,...]: parameters of listed actors, for this run.
void apply_sets(const std::string& sets, config::settings& s) {
  std::vector<config::diagnostic> problems;
  std::size_t start = 0;
  while (start < sets.size()) {
    auto end = sets.find(',', start);
    auto item = sets.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? sets.size() : end + 1;
    config::origin where{"--set " + item, 0, 0};
    auto dot = item.find('.'), eq = item.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot) {
      problems.push_back({where, "expected ACTOR.KEY=VALUE"});
      continue;
    }
    auto actor = item.substr(0, dot), key = item.substr(dot + 1, eq - dot - 1);
    config::actor_spec* spec = nullptr;
    for (auto& a : s.actors)
      if (a.name == actor)
        spec = &a;
    if (!spec) {
      problems.push_back({where, "the file lists no actor named '" + actor + "'"});
      continue;
    }
    bool replaced = false;
    for (auto& p : spec->params)
      if (p.key == key)
        p = {key, item.substr(eq + 1), where}, replaced = true;
    if (!replaced)
      spec->params.push_back({key, item.substr(eq + 1), where});
  }
  if (!problems.empty())
    throw config::error(std::move(problems));
}

int fail_config(const config::error& e) {
  for (const auto& d : e.problems())
    std::cerr << d.to_string() << "\n";
  std::cerr << e.problems().size() << (e.problems().size() == 1 ? " problem" : " problems")
            << "; the node did not start\n";
  return 1;
}

// Blocks the stop signals in every thread (CAF's included, which inherit
// the mask) so that only sigwait sees them.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

}  // namespace

int node_main(int argc, char** argv, const actor_registry& types) {
  const char* program = argc > 0 ? argv[0] : "riomesh-node";
  config::command_line cmd;
  try {
    cmd = config::parse_command_line(argc, argv, 1, {"--config", "--set"},
                                     {"--check", "--list-types", "--help", "-h"});
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n";
    usage(program, std::cerr);
    return 2;
  }
  if (cmd.has("--help") || cmd.has("-h")) {
    usage(program, std::cout);
    return 0;
  }
  if (cmd.has("--list-types")) {
    for (const auto& [type, summary] : types.types())
      std::cout << type << "\t" << summary << "\n";
    return 0;
  }
  if (!cmd.has("--config") || !cmd.positional.empty()) {
    usage(program, std::cerr);
    return 2;
  }
  auto path = cmd.get("--config");
  config::settings settings;
  std::vector<std::pair<config::actor_spec, actor_registry::spawner>> plan;
  try {
    settings = config::load_file(path, cmd.extra);
    apply_sets(cmd.get("--set"), settings);
    plan = types.prepare(settings);
  } catch (const config::error& e) {
    return fail_config(e);
  }
  if (cmd.has("--check")) {
    std::cout << path << ": ok (node '" << settings.node.name << "', " << plan.size()
              << (plan.size() == 1 ? " actor" : " actors") << ")\n";
    return 0;
  }
  auto stop_signals = block_stop_signals();
  const auto name = settings.node.name;
  try {
    runtime rt{settings, types.configurer()};
    auto listen = settings.node.listen;
    listen.port = rt.port();
    logging::info(name, "listening on " + config::to_string(listen) + "; fabric " + rt.fabric());
    std::vector<caf::actor_addr> spawned_actors;
    for (auto& [spec, spawn] : plan) {
      auto actor = spawn(rt);
      spawned_actors.push_back(actor.address());
      if (!actor.publish(rt, spec.name))
        throw std::runtime_error(spec.where.to_string() + ": actor '" + spec.name +
                                 "' could not be published (is the name reserved?)");
      logging::info(name, "actor '" + spec.name + "' (" + spec.type + ") published");
    }
    int signal = 0;
    sigwait(&stop_signals, &signal);
    logging::info(name, std::string{"stopping on "} + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
    // The actors first, so that nothing new is queued while the connections drain.
    for (const auto& addr : spawned_actors)
      if (auto a = caf::actor_cast<caf::actor>(addr))
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    rt.stop();
  } catch (const config::error& e) {
    return fail_config(e);
  } catch (const std::exception& e) {
    std::cerr << program << ": node '" << name << "' cannot start: " << e.what() << "\n";
    return 1;
  }
  logging::info(name, "stopped");
  return 0;
}

}  // namespace riomesh
