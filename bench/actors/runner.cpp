#include "runner.hpp"

#include "../size_name.hpp"
#include "child.hpp"
#include "remote.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace bench {
namespace {

std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w)
    if (auto eq = w.find('='); eq != std::string::npos)
      out[w.substr(0, eq)] = w.substr(eq + 1);
  return out;
}

outcome parse_result(const std::string& line, long& rss_kib) {
  auto f = fields(line);
  outcome o;
  o.delivered = std::stoull(f["delivered"]);
  o.start_s = std::stod(f["start"]);
  o.end_s = std::stod(f["end"]);
  o.cpu_s = std::stod(f["cpu_s"]);
  o.seconds = std::stod(f["seconds"]);
  o.p50_us = std::stod(f["p50_us"]);
  o.p99_us = std::stod(f["p99_us"]);
  auto copied = std::stoll(f["copied"]);
  o.known_copies = copied >= 0;
  o.copied = o.known_copies ? static_cast<std::uint64_t>(copied) : 0;
  rss_kib = std::stol(f["rss_kib"]);
  return o;
}

// Every client's figures as one: deliveries over the span from the first
// start to the last end.
outcome combine(const std::vector<outcome>& all, std::size_t size) {
  outcome o;
  o.known_copies = true;
  o.start_s = all.front().start_s;
  for (const auto& c : all) {
    o.delivered += c.delivered;
    o.start_s = std::min(o.start_s, c.start_s);
    o.end_s = std::max(o.end_s, c.end_s);
    o.cpu_s += c.cpu_s;
    o.p50_us = std::max(o.p50_us, c.p50_us);
    o.p99_us = std::max(o.p99_us, c.p99_us);
    o.copied += c.copied;
    o.known_copies = o.known_copies && c.known_copies;
  }
  o.seconds = o.end_s - o.start_s;
  o.msgs_per_s = double(o.delivered) / o.seconds;
  o.mib_per_s = o.msgs_per_s * double(size) / (1 << 20);
  return o;
}

// One run: servers up, clients connected, "mark" and "go", results read,
// everything stopped and reaped.
bool run_once(const settings& s, const std::string& kind, row& r) {
  const auto& c = r.c;
  std::vector<std::unique_ptr<child>> servers, clients;
  std::string ports, word;
  for (int i = 0; i < c.servers; ++i) {
    servers.push_back(
        std::make_unique<child>(on_server_host({s.self, "serve", kind, std::to_string(i)})));
    if (!servers.back()->await("ready ", word)) {
      std::cerr << "actor_bench: a " << kind << " server did not start\n";
      return false;
    }
    ports += (ports.empty() ? "" : ",") + word;
  }
  const auto& j = c.j;
  for (int i = 0; i < c.clients; ++i) {
    clients.push_back(std::make_unique<child>(
        std::vector<std::string>{s.self, "drive", kind, ports, j.pattern, std::to_string(j.size),
                                 std::to_string(j.count), std::to_string(j.window)}));
    if (!clients.back()->await("connected", word)) {
      std::cerr << "actor_bench: a " << kind << " client could not connect\n";
      return false;
    }
  }
  for (auto& srv : servers)
    srv->say("mark");
  for (auto& cl : clients)
    cl->say("go");
  bool ok = true;
  std::vector<outcome> results;
  for (auto& cl : clients) {
    std::vector<std::string> rest;
    if (cl->await("result ", word)) {
      long rss = 0;
      results.push_back(parse_result(word, rss));
      r.client_rss_kib = std::max(r.client_rss_kib, rss);
    } else {
      ok = false;
    }
    ok = cl->finish(rest) && ok;
  }
  r.cpu_s = 0;
  for (auto& srv : servers) {
    std::vector<std::string> rest;
    ok = srv->finish(rest) && ok;
    for (const auto& line : rest) {
      if (line.rfind("cpu_s ", 0) == 0)
        r.cpu_s += std::stod(line.substr(6));
      if (line.rfind("peak_rss_kib ", 0) == 0)
        r.server_rss_kib = std::max(r.server_rss_kib, std::stol(line.substr(13)));
    }
  }
  if (!ok || results.size() != clients.size())
    return false;
  r.o = combine(results, j.size);
  r.cpu_s += r.o.cpu_s;
  return r.o.seconds > 0 && r.o.delivered == j.count * std::uint64_t(c.servers * c.clients);
}

std::vector<case_spec> pair_cases(bool quick, bool vm) {
  std::vector<case_spec> out;
  // Under the VM's emulated CPU, a 16th of the work.
  std::uint64_t scale = vm ? 16 : 1;
  for (std::size_t size : {4096ul, 65536ul, 256ul << 10, 1ul << 20, 16ul << 20}) {
    // About 1 GiB per run, at least 64 messages (quick: 8 MiB, at least 4;
    // in the VM: 64 MiB, at least 16).
    std::uint64_t least = quick ? 4 : 64 / (vm ? 4 : 1);
    std::uint64_t count =
        std::max<std::uint64_t>(least, (quick ? 8ull << 20 : (1ull << 30) / scale) / size);
    if (!quick && size == 4096)
      count = 100000 / scale;
    // One way: up to 64 MiB unacknowledged, 4 to 512 messages.
    std::uint64_t window = std::clamp<std::uint64_t>((64ull << 20) / size, 4, 512);
    out.push_back({size_name(size) + " one-way", "pair", {"oneway", size, count, window}});
    out.push_back({size_name(size) + " window", "pair", {"window", size, count, 16}});
  }
  out.push_back({"8 B one-way", "pair", {"oneway", 8, quick ? 2000u : 400000u / scale, 512}});
  out.push_back({"8 B window", "pair", {"window", 8, quick ? 2000u : 200000u / scale, 128}});
  out.push_back({"8 B round trip", "pair", {"rtt", 8, quick ? 200u : 20000u / scale, 1}});
  // 8 MiB there and back, one request at a time: what placement, arena
  // release and registration cost a sequential request / response.
  out.push_back({"8 MiB echo",
                 "pair",
                 {"echo", 8ul << 20, quick ? 4u : std::max<std::uint64_t>(8, 128 / scale), 1}});
  return out;
}

// N clients to one server, and one client to N servers, at 8 B (the cost
// of a message) and 64 KiB (the cost of a byte). The total work stays the
// same as N grows, so the rates compare directly.
std::vector<case_spec> scale_cases(bool quick) {
  std::vector<case_spec> out;
  std::vector<int> fans = quick ? std::vector<int>{4} : std::vector<int>{1, 4, 16, 64};
  for (int n : fans)
    for (std::size_t size : {8ul, 65536ul}) {
      std::uint64_t total = size == 8 ? (quick ? 4000 : 200000) : (quick ? 256 : 16384);
      std::uint64_t count = std::max<std::uint64_t>(16, total / std::uint64_t(n));
      job j{"window", size, count, size == 8 ? 128u : 16u};
      auto name = size_name(size);
      out.push_back({name + ", " + std::to_string(n) + " clients", "clients", j, 1, n});
      out.push_back({name + ", fan-out " + std::to_string(n), "fan-out", j, n, 1});
    }
  return out;
}

row median_of(std::vector<row> runs) {
  // The median by rate; a failed run sorts first and loses.
  std::sort(runs.begin(), runs.end(),
            [](const row& a, const row& b) { return a.o.msgs_per_s < b.o.msgs_per_s; });
  auto median = runs[runs.size() / 2];
  median.ok = std::all_of(runs.begin(), runs.end(), [](const row& r) { return r.ok; });
  return median;
}

}  // namespace

std::vector<row> run_all(const settings& s) {
  bool vm = std::getenv("RIOMESH_RDMA_ADDR") != nullptr;
  std::vector<std::pair<case_spec, std::vector<std::string>>> plan;
  std::vector<std::string> contenders{"riomesh", "caf", "raw"};
  if (servers_remote())
    contenders = {"riomesh"};  // CAF and raw TCP serve on loopback only
  if (s.dmabuf)
    contenders.insert(contenders.begin() + 1, "riomesh-dmabuf");
  if (s.gather)
    contenders.insert(contenders.begin() + 1, "riomesh-gather");
  if (s.encrypt)
    contenders.insert(contenders.begin() + 1, "riomesh-tls");
  auto tools = vm ? rdma_tools() : std::vector<std::string>{};
  for (const auto& c : pair_cases(s.quick, vm)) {
    auto who = contenders;
    // Busy-polling raw TCP only where one message is in flight: with many
    // connections, threads spinning on two cores measure the scheduler.
    if (round_trips(c.j) && !servers_remote())
      who.push_back("raw-spin");
    // The rsocket tools stream one way or ping-pong: no windowed requests.
    if (c.j.pattern != "window")
      who.insert(who.end(), tools.begin(), tools.end());
    plan.push_back({c, who});
  }
  if (s.scale)
    for (const auto& c : scale_cases(s.quick))
      plan.push_back({c, contenders});
  plan.erase(
      std::remove_if(plan.begin(), plan.end(),
                     [&](const auto& p) { return p.first.name.find(s.only) == std::string::npos; }),
      plan.end());
  std::size_t steps = 0, step = 0;
  for (const auto& p : plan)
    steps += p.second.size();
  std::vector<row> rows;
  int reps = s.quick ? 1 : s.reps;
  for (const auto& [c, who] : plan)
    for (const auto& kind : who) {
      std::fprintf(stderr, "[%3zu/%zu] %-22s %-10s", ++step, steps, c.name.c_str(), kind.c_str());
      std::vector<row> runs;
      for (int i = 0; i < reps; ++i) {
        row r{c, kind, {}, 0, 0, 0, false};
        bool external = std::find(tools.begin(), tools.end(), kind) != tools.end();
        r.ok = external ? run_rdma_tool(kind, c.j, r) : run_once(s, kind, r);
        std::fprintf(stderr, " %s", r.ok ? "." : "x");
        runs.push_back(r);
      }
      auto median = median_of(runs);
      std::fprintf(stderr, "  %10.1f msg/s %9.1f MiB/s\n", median.o.msgs_per_s, median.o.mib_per_s);
      rows.push_back(median);
    }
  return rows;
}

}  // namespace bench
