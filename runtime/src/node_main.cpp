#include <riomesh/node_main.hpp>

#include "service_notify.hpp"

#include <riomesh/config/address.hpp>
#include <riomesh/config/command_line.hpp>
#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/log.hpp>
#include <riomesh/version.hpp>

#include <caf/actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <signal.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace riomesh {
namespace {

void usage(const char* program, std::ostream& out) {
  out << "usage: " << program << " --config FILE [--check] [--list-types] [overrides]\n"
      << "  --config FILE   the node file: node, cluster, channel, runtime, logging, actors\n"
      << "  --check         read FILE and its actors' parameters, start nothing\n"
      << "  --list-types    the actor types this program can spawn\n"
      << "  --set ACTOR.KEY=VALUE[,...]  an actor parameter for this run\n"
      << "  --help, --version\n"
      << "Overrides:\n"
      << config::override_help;
}

// --set ACTOR.KEY=VALUE[,...]: parameters of listed actors, for this run.
void apply_sets(const std::string& sets, config::settings& s,
                std::vector<config::diagnostic>& problems) {
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

node_plan check_node(const std::string& path, const config::overrides& extra,
                     const std::string& sets, const actor_registry& types) {
  std::vector<config::diagnostic> problems;
  node_plan out;
  out.settings = config::read_file(path, extra, problems);
  apply_sets(sets, out.settings, problems);
  try {
    out.actors = types.prepare(out.settings);
  } catch (const config::error& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  if (problems.empty())
    return out;
  // Actors' problems stand at their entries: one order for all, the file's
  // by line, then those of the command line.
  std::stable_sort(problems.begin(), problems.end(),
                   [&](const config::diagnostic& a, const config::diagnostic& b) {
                     auto key = [&](const config::diagnostic& d) {
                       return std::make_tuple(d.where.source != path, d.where.line, d.where.column);
                     };
                     return key(a) < key(b);
                   });
  throw config::error(std::move(problems));
}

void print_check_ok(const std::string& path, const node_plan& plan) {
  auto n = plan.actors.size();
  std::cout << path << ": ok (node '" << plan.settings.node.name << "', " << n
            << (n == 1 ? " actor" : " actors") << ")\n";
}

void print_check_problems(const std::string& path, const config::error& e, const char* verdict) {
  for (const auto& d : e.problems())
    std::cerr << d.to_string() << "\n";
  auto n = e.problems().size();
  std::cerr << path << ": " << n << (n == 1 ? " problem" : " problems") << "; " << verdict << "\n";
}

int node_main(int argc, char** argv, const actor_registry& types) {
  const char* program = argc > 0 ? argv[0] : "riomesh-node";
  config::command_line cmd;
  try {
    cmd = config::parse_command_line(argc, argv, 1, {"--config", "--set"},
                                     {"--check", "--list-types", "--help", "-h", "--version"});
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n";
    usage(program, std::cerr);
    return 2;
  }
  if (cmd.has("--help") || cmd.has("-h")) {
    usage(program, std::cout);
    return 0;
  }
  if (cmd.has("--version")) {
    std::cout << program << " (riomesh " << version << ")\n";
    return 0;
  }
  if (cmd.has("--list-types")) {
    for (const auto& [type, summary] : types.types())
      std::cout << type << "\t" << summary << "\n";
    return 0;
  }
  if (!cmd.has("--config") || !cmd.positional.empty()) {
    std::cerr << program << ": "
              << (cmd.positional.empty() ? std::string{"--config FILE is required"}
                                         : "unexpected '" + cmd.positional[0] + "'")
              << "\n";
    usage(program, std::cerr);
    return 2;
  }
  auto path = cmd.get("--config");
  node_plan checked;
  try {
    checked = check_node(path, cmd.extra, cmd.get("--set"), types);
  } catch (const config::error& e) {
    print_check_problems(
        path, e, cmd.has("--check") ? "the node would not start" : "the node did not start");
    return 1;
  }
  if (cmd.has("--check")) {
    print_check_ok(path, checked);
    return 0;
  }
  auto& settings = checked.settings;
  auto& plan = checked.actors;
  auto stop_signals = block_stop_signals();
  const auto name = settings.node.name;
  // Served once the actors are up: ready means they are spawned too.
  auto metrics = std::exchange(settings.node.metrics, {});
  try {
    runtime rt{settings, types.configurer()};
    auto listen = settings.node.listen;
    listen.port = rt.port();
    logging::info(name, {"listening",
                         "",
                         {{"address", config::to_string(listen)}, {"fabric", rt.fabric()}},
                         "listening on " + config::to_string(listen) + "; fabric " + rt.fabric()});
    std::vector<caf::actor_addr> spawned_actors;
    for (auto& [spec, spawn] : plan) {
      auto actor = spawn(rt);
      spawned_actors.push_back(actor.address());
      if (!actor.publish(rt, spec.name))
        throw std::runtime_error(spec.where.to_string() + ": actor '" + spec.name +
                                 "' could not be published (is the name reserved?)");
      logging::info(name, {"actor_published",
                           "",
                           {{"actor", spec.name}, {"type", spec.type}},
                           "actor '" + spec.name + "' (" + spec.type + ") published"});
    }
    if (!metrics.host.empty())
      rt.serve_metrics(metrics);
    detail::service_notify service([&rt](std::chrono::milliseconds limit) {
      caf::scoped_actor self{rt.system()};
      bool answered = false;
      self->request(rt.admin(), limit, ping_atom::value)
          .receive([&](const std::string&) { answered = true; }, [](caf::error&) {});
      return answered;
    });
    service.ready("node '" + name + "' listening on " + config::to_string(listen) + ", " +
                  std::to_string(plan.size()) + " actors");
    int signal = 0;
    sigwait(&stop_signals, &signal);
    service.stopping();
    std::string signal_name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    logging::info(name, {"stopping", "", {{"signal", signal_name}}, "stopping on " + signal_name});
    // What the node pinned over its life, for whoever sizes memlock limits.
    auto m = rt.stats().memory;
    if (m.devices > 0)
      logging::info(name,
                    {"memory_used",
                     "",
                     {{"registrations", std::uint64_t{m.registrations}},
                      {"registered", std::uint64_t{m.registered}},
                      {"peak_pinned_bytes", std::uint64_t{m.peak_pinned_bytes}},
                      {"cache_misses", std::uint64_t{m.cache_misses}},
                      {"cache_hits", std::uint64_t{m.cache_hits}}},
                     "memory: " + std::to_string(m.registrations) + " registrations made, " +
                         std::to_string(m.registered) + " live, " +
                         std::to_string(m.peak_pinned_bytes >> 10) +
                         " KiB pinned at most; send cache: " + std::to_string(m.cache_misses) +
                         " misses, " + std::to_string(m.cache_hits) + " hits"});
    // The actors first, so that nothing new is queued while the connections drain.
    for (const auto& addr : spawned_actors)
      if (auto a = caf::actor_cast<caf::actor>(addr))
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    rt.stop();
  } catch (const config::error& e) {
    print_check_problems(path, e, "the node did not start");
    return 1;
  } catch (const std::exception& e) {
    std::cerr << program << ": node '" << name << "' cannot start: " << e.what() << "\n";
    return 1;
  }
  logging::info(name, {"stopped", "", {}, "stopped"});
  return 0;
}

}  // namespace riomesh
