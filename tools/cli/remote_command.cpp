#include "remote_command.hpp"

#include "remote_target.hpp"
#include "stat_view.hpp"

#include <riomesh/config/text.hpp>

#include <caf/scoped_actor.hpp>

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>

namespace riomesh::cli {

const char* const ping_usage =
    "  ping NODE [--count N] [--interval DUR]\n"
    "                       round trips to NODE's admin actor (N: 1-1000000, default 4;\n"
    "                       DUR default 1s)\n";
const char* const stat_usage =
    "  stat NODE [--interval DUR] [--watch [--count N]] [--json]\n"
    "                       NODE's counters and rates over DUR (default 1s), and one row\n"
    "                       per connection; --watch repeats until interrupted (or N\n"
    "                       times), --json prints one JSON object per interval\n";
const char* const ls_usage =
    "  ls NODE              the names published on NODE, with their interfaces\n";
const char* const target_usage =
    "  NODE is found in --config FILE (a node file of its cluster: NODE itself or one of\n"
    "  its peers, and the cluster's secret) or at --at HOST:PORT [--secret-file FILE].\n";
const std::set<std::string> target_options = {"--config", "--at", "--secret-file"};

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

caf::expected<stat_report> fetch(runtime& rt, const admin_actor& admin) {
  caf::scoped_actor self{rt.system()};
  caf::expected<stat_report> out{stat_report{}};
  self->request(admin, std::chrono::seconds(10), report_atom::value)
      .receive([&](stat_report& r) { out = std::move(r); }, [&](caf::error& e) { out = e; });
  return out;
}

// --watch ends on SIGINT or SIGTERM, after the interval under way.
volatile sig_atomic_t interrupted = 0;

void on_interrupt(int) {
  interrupted = 1;
}

void sleep_unless_interrupted(std::chrono::nanoseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (!interrupted && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
        std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
}

}  // namespace

int ping_command(const config::command_line& cmd) {
  auto count = count_arg(cmd, "--count", 4, 1, 1000000);
  auto gap = duration_arg(cmd, "--interval", "1s");
  auto t = find_target(cmd);
  return with_admin(t, [&](runtime& rt, const admin_actor& admin) {
    std::vector<double> times;
    caf::scoped_actor self{rt.system()};
    for (std::uint64_t i = 1; i <= count; ++i) {
      auto sent = std::chrono::steady_clock::now();
      self->request(admin, std::chrono::seconds(5), ping_atom::value)
          .receive(
              [&](const std::string& name) {
                times.push_back(ms_since(sent));
                std::printf("reply from %s (%s): seq=%llu time=%.3f ms\n", name.c_str(),
                            t.where.c_str(), static_cast<unsigned long long>(i), times.back());
              },
              [&](caf::error& e) {
                std::printf("no reply from %s: seq=%llu %s\n", t.node.c_str(),
                            static_cast<unsigned long long>(i), rt.system().render(e).c_str());
              });
      std::fflush(stdout);
      if (i < count)
        std::this_thread::sleep_for(gap);
    }
    std::sort(times.begin(), times.end());
    std::printf("%llu sent, %zu replies", static_cast<unsigned long long>(count), times.size());
    if (!times.empty())
      std::printf(", round trip min %.3f / p50 %.3f / max %.3f ms", times.front(),
                  times[times.size() / 2], times.back());
    std::printf("\n");
    return times.size() == count ? 0 : 1;
  });
}

int stat_command(const config::command_line& cmd) {
  auto gap = duration_arg(cmd, "--interval", "1s");
  bool watch = cmd.has("--watch"), json = cmd.has("--json");
  if (cmd.has("--count") && !watch)
    throw usage_error("--count goes with --watch (how many intervals to show)");
  auto rounds = count_arg(cmd, "--count", 0, 1, 1000000);  // 0: until interrupted
  auto t = find_target(cmd);
  signal(SIGINT, on_interrupt);
  signal(SIGTERM, on_interrupt);
  return with_admin(t, [&](runtime& rt, const admin_actor& admin) {
    auto before = fetch(rt, admin);
    auto taken = std::chrono::steady_clock::now();
    for (std::uint64_t round = 1;; ++round) {
      sleep_unless_interrupted(gap);
      auto after = fetch(rt, admin);
      auto now = std::chrono::steady_clock::now();
      if (!before || !after) {
        std::cerr << "riomesh: " << rt.system().render(before ? after.error() : before.error())
                  << "\n";
        return 1;
      }
      double secs = std::chrono::duration<double>(now - taken).count();
      if (json)
        print_stat_json(*before, *after, secs, rt.node_name(), std::cout);
      else
        print_stat_table(*before, *after, secs, rt.node_name(), std::cout);
      std::cout.flush();
      if (!watch || interrupted || (rounds && round == rounds))
        return 0;
      if (!json)
        std::cout << "\n";
      before = std::move(after);
      taken = now;
    }
  });
}

// Each connection is an actor of the node: its id, whom it reaches, how.
static void print_connections(const std::vector<connection_info>& list) {
  std::printf("\n%zu %s\n", list.size(), list.size() == 1 ? "connection" : "connections");
  if (list.empty())
    return;
  std::printf("%-8s %-24s %-12s %s\n", "actor", "peer", "phase", "made by");
  for (const auto& c : list)
    std::printf("%-8llu %-24s %-12s %s\n", static_cast<unsigned long long>(c.actor),
                c.peer.empty() ? "-" : config::printable(c.peer).c_str(), c.phase.c_str(),
                c.dialed ? "dialed" : "accepted");
}

int ls_command(const config::command_line& cmd) {
  auto t = find_target(cmd);
  return with_admin(t, [&](runtime& rt, const admin_actor& admin) {
    caf::scoped_actor self{rt.system()};
    int code = 0;
    self->request(admin, std::chrono::seconds(10), list_atom::value)
        .receive(
            [&](const published_list& list) {
              std::printf("%zu %s published on node %s\n", list.names.size(),
                          list.names.size() == 1 ? "name" : "names", t.node.c_str());
              for (const auto& [name, interface] : list.names) {
                if (interface.empty()) {
                  std::printf("%-24s untyped: takes any message\n", name.c_str());
                  continue;
                }
                std::printf("%s\n", name.c_str());
                std::size_t start = 0;
                while (start < interface.size()) {
                  auto end = interface.find('\n', start);
                  std::printf("    %s\n", interface.substr(start, end - start).c_str());
                  start = end == std::string::npos ? interface.size() : end + 1;
                }
              }
              print_connections(list.connections);
            },
            [&](caf::error& e) {
              std::cerr << "riomesh: " << rt.system().render(e) << "\n";
              code = 1;
            });
    return code;
  });
}

}  // namespace riomesh::cli
