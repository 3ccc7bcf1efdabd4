#include "remote_command.hpp"

#include <riomesh/config/address.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/config/units.hpp>
#include <riomesh/runtime.hpp>

#include <caf/scoped_actor.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>
#include <thread>
#include <variant>

namespace riomesh::cli {

const char* const remote_usage =
    "  ping NODE [--count N] [--interval DUR]   round trips to NODE's admin actor\n"
    "  stat NODE [--interval DUR]     NODE's connections, queues, credits, arenas,\n"
    "                                 registrations, copy counters and rates\n"
    "    NODE is found in --config FILE (a node file of the cluster: its own node or\n"
    "    one of its peers, and its secret) or at --at HOST:PORT (--secret-file F).\n";

const std::set<std::string> remote_options = {"--config", "--at", "--secret-file", "--count",
                                              "--interval"};

namespace {

struct target {
  std::string node;
  config::settings self;  // the CLI's own node, with NODE as its one peer
};

std::string read_secret(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw std::runtime_error("cannot read secret file '" + path + "'");
  std::string s;
  char chunk[256];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0)
    s.append(chunk, n);
  std::fclose(f);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

target find_target(const config::command_line& cmd) {
  if (cmd.positional.size() != 2)
    throw std::invalid_argument("name one node");
  target t;
  t.node = cmd.positional[1];
  auto& s = t.self;
  config::endpoint where;
  if (cmd.has("--at")) {
    auto parsed = config::parse_endpoint(cmd.get("--at"));
    if (auto* problem = std::get_if<std::string>(&parsed))
      throw std::invalid_argument("--at " + cmd.get("--at") + ": " + *problem);
    where = std::get<config::endpoint>(parsed);
    if (cmd.has("--secret-file"))
      s.cluster.secret = read_secret(cmd.get("--secret-file"));
  } else if (cmd.has("--config")) {
    auto file = config::load_file(cmd.get("--config"));
    bool found = false;
    if (file.node.name == t.node)
      where = file.node.listen, found = true;
    for (const auto& p : file.cluster.peers)
      if (p.name == t.node)
        where = p.address, found = true;
    if (!found)
      throw std::invalid_argument(cmd.get("--config") + " names no node '" + t.node + "'");
    if (where.host == "0.0.0.0" || where.host == "::")
      where.host = where.host == "::" ? "::1" : "127.0.0.1";
    s.cluster.secret = file.cluster.secret;
    s.node.fabric = file.node.fabric;
    s.node.device = file.node.device;
  } else {
    throw std::invalid_argument("say where NODE is: --config FILE or --at HOST:PORT");
  }
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
  return t;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::chrono::nanoseconds interval_of(const config::command_line& cmd) {
  auto text = cmd.get("--interval", "1s");
  auto d = config::parse_duration(text);
  if (!d || d->count() <= 0)
    throw std::invalid_argument("--interval " + text + ": expected a duration such as 500ms");
  return *d;
}

caf::expected<stat_report> fetch(runtime& rt, const caf::actor& admin) {
  caf::scoped_actor self{rt.system()};
  caf::expected<stat_report> out{stat_report{}};
  self->request(admin, std::chrono::seconds(10), report_atom::value)
      .receive([&](stat_report& r) { out = std::move(r); }, [&](caf::error& e) { out = e; });
  return out;
}

template <class F>
int with_admin(const config::command_line& cmd, F body) {
  try {
    auto t = find_target(cmd);
    runtime rt{t.self};
    auto admin = rt.remote_actor(t.node, admin_name, std::chrono::seconds(5));
    if (!admin) {
      std::cerr << "riomesh: node '" << t.node << "' at "
                << config::to_string(t.self.cluster.peers[0].address)
                << " does not answer: " << rt.system().render(admin.error()) << "\n";
      return 1;
    }
    return body(rt, *admin, t);
  } catch (const std::exception& e) {
    std::cerr << "riomesh: " << e.what() << "\n";
    return 2;
  }
}

void print_stat(const stat_report& a, const stat_report& b, double secs, const std::string& me) {
  std::printf("node %s (pid %s) listening on %s, up %.1f s\nfabric: %s\n\n", b.fact("node").c_str(),
              b.fact("pid").c_str(), b.fact("listen").c_str(),
              double(b.value("node.uptime_ms")) / 1e3, b.fact("fabric").c_str());
  std::printf("%-26s %16s %14s\n", "node counter", "total", "per second");
  for (const auto& [key, value] : b.counters) {
    if (key.rfind("node.", 0) != 0 || key == "node.uptime_ms")
      continue;
    double rate = double(value - std::min(value, a.value(key))) / secs;
    std::printf("%-26s %16llu %14.1f\n", key.c_str() + 5, static_cast<unsigned long long>(value),
                rate);
  }
  std::set<std::string> peers;  // "peer.<name>.<counter>": names may hold dots
  for (const auto& [key, value] : b.counters)
    if (key.rfind("peer.", 0) == 0)
      peers.insert(key.substr(5, key.rfind('.') - 5));
  std::printf("\n%-16s %7s %8s %10s %10s %10s %10s %7s %9s %7s %9s\n", "peer", "queue", "stalls",
              "arena used", "peer free", "msg/s out", "msg/s in", "MiB/s", "copied", "regs",
              "reg hits");
  for (const auto& peer : peers) {
    if (peer == me || peer.rfind("riomesh-cli-", 0) == 0)  // CLIs, this one and earlier ones
      continue;
    auto v = [&](const char* k) { return b.value("peer." + peer + "." + k); };
    auto rate = [&](const char* k) {
      auto key = "peer." + peer + "." + k;
      return double(b.value(key) - std::min(b.value(key), a.value(key))) / secs;
    };
    double mib = (rate("bytes_placed_out") + rate("bytes_placed_in") + rate("inline_bytes_out") +
                  rate("inline_bytes_in")) /
                 (1 << 20);
    std::printf(
        "%-16s %7llu %8llu %10s %10s %10.1f %10.1f %7.1f %9s %7llu %9llu\n", peer.c_str(),
        static_cast<unsigned long long>(v("queue_depth")),
        static_cast<unsigned long long>(v("credit_stalls")),
        config::approximate_size(double(v("arena_in_use"))).c_str(),
        config::approximate_size(double(v("peer_arena_free"))).c_str(), rate("messages_out"),
        rate("messages_in"), mib,
        config::approximate_size(double(v("inline_bytes_in") + v("streamed_bytes_in"))).c_str(),
        static_cast<unsigned long long>(v("registrations")),
        static_cast<unsigned long long>(v("registration_hits")));
  }
}

}  // namespace

int ping_command(const config::command_line& cmd) {
  return with_admin(cmd, [&](runtime& rt, const caf::actor& admin, const target& t) {
    auto count = std::stoul(cmd.get("--count", "4"));
    auto gap = interval_of(cmd);
    std::vector<double> times;
    caf::scoped_actor self{rt.system()};
    auto where = config::to_string(t.self.cluster.peers[0].address);
    for (unsigned long i = 1; i <= count; ++i) {
      auto sent = std::chrono::steady_clock::now();
      self->request(admin, std::chrono::seconds(5), ping_atom::value)
          .receive(
              [&](const std::string& name) {
                times.push_back(ms_since(sent));
                std::printf("reply from %s (%s): seq=%lu time=%.3f ms\n", name.c_str(),
                            where.c_str(), i, times.back());
              },
              [&](caf::error& e) {
                std::printf("no reply from %s: seq=%lu %s\n", t.node.c_str(), i,
                            rt.system().render(e).c_str());
              });
      std::fflush(stdout);
      if (i < count)
        std::this_thread::sleep_for(gap);
    }
    std::sort(times.begin(), times.end());
    std::printf("%lu sent, %zu replies", count, times.size());
    if (!times.empty())
      std::printf(", round trip min %.3f / p50 %.3f / max %.3f ms", times.front(),
                  times[times.size() / 2], times.back());
    std::printf("\n");
    return times.size() == count ? 0 : 1;
  });
}

int stat_command(const config::command_line& cmd) {
  return with_admin(cmd, [&](runtime& rt, const caf::actor& admin, const target&) {
    auto gap = interval_of(cmd);
    auto first = fetch(rt, admin);
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(gap);
    auto second = fetch(rt, admin);
    if (!first || !second) {
      std::cerr << "riomesh: " << rt.system().render(first ? second.error() : first.error())
                << "\n";
      return 1;
    }
    print_stat(*first, *second, ms_since(start) / 1e3, rt.node_name());
    return 0;
  });
}

}  // namespace riomesh::cli
