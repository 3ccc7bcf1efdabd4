#include "stat_view.hpp"

#include <riomesh/config/units.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace riomesh::cli {
namespace {

// Counters in bytes print as sizes, the rest as counts.
bool in_bytes(const std::string& key) {
  return key.find("bytes") != std::string::npos || key.find("copied") != std::string::npos ||
         key.find("arena") != std::string::npos;
}

// How many there are now, not how many happened: no rate.
bool is_gauge(const std::string& key) {
  for (const char* g : {"node.proxies", "node.exported", "node.published", "memory.devices",
                        "memory.registered", "memory.pinned_bytes", "memory.peak_pinned_bytes",
                        "memory.cache_entries", "memory.cache_bytes"})
    if (key == g)
      return true;
  return false;
}

double rate(const stat_report& a, const stat_report& b, const std::string& key, double secs) {
  auto x = b.value(key), y = a.value(key);
  return secs > 0 ? double(x - std::min(x, y)) / secs : 0.0;
}

std::string count(double n) {
  char text[32];
  if (n >= 1e9)
    std::snprintf(text, sizeof text, "%.2fG", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(text, sizeof text, "%.2fM", n / 1e6);
  else if (n >= 1e4)
    std::snprintf(text, sizeof text, "%.1fk", n / 1e3);
  else
    std::snprintf(text, sizeof text, n == double(std::uint64_t(n)) ? "%.0f" : "%.1f", n);
  return text;
}

std::string value_text(const std::string& key, double v, bool per_second) {
  if (in_bytes(key))
    return config::approximate_size(v) + (per_second ? "/s" : "");
  return count(v) + (per_second ? "/s" : "");
}

// "peer.<name>.<counter>": names may hold dots, counters do not.
std::set<std::string> peers_of(const stat_report& r, const std::string& me) {
  std::set<std::string> out;
  for (const auto& [key, value] : r.counters)
    if (key.rfind("peer.", 0) == 0) {
      auto name = key.substr(5, key.rfind('.') - 5);
      if (name != me && name.rfind("riomesh-cli-", 0) != 0)  // CLIs, this one and earlier ones
        out.insert(name);
    }
  return out;
}

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (b < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", b);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

void print_stat_table(const stat_report& a, const stat_report& b, double secs,
                      const std::string& me, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "node %s (pid %s) listening on %s, up %.1f s\nfabric: %s\n\n",
                b.fact("node").c_str(), b.fact("pid").c_str(), b.fact("listen").c_str(),
                double(b.value("node.uptime_ms")) / 1e3, b.fact("fabric").c_str());
  out << line;
  std::snprintf(line, sizeof line, "%-24s %14s %16s\n", "node counter", "total", "rate");
  out << line;
  auto section = [&](const std::string& prefix) {
    for (const auto& [key, value] : b.counters) {
      if (key.rfind(prefix, 0) != 0 || key == "node.uptime_ms")
        continue;
      std::snprintf(line, sizeof line, "%-24s %14s %16s\n", key.c_str() + prefix.size(),
                    value_text(key, double(value), false).c_str(),
                    is_gauge(key) ? "-" : value_text(key, rate(a, b, key, secs), true).c_str());
      out << line;
    }
  };
  section("node.");
  if (b.value("memory.devices") > 0) {
    // The node's memory domain: what it registered with its RDMA devices.
    std::snprintf(line, sizeof line, "\n%-24s %14s %16s\n", "memory counter", "total", "rate");
    out << line;
    section("memory.");
  }
  std::snprintf(line, sizeof line, "\n%-16s %6s %7s %10s %10s %9s %9s %10s %10s %6s %8s\n", "peer",
                "queue", "stalls", "arena used", "peer free", "msg/s out", "msg/s in", "MiB/s",
                "copied", "regs", "reg hits");
  out << line;
  for (const auto& peer : peers_of(b, me)) {
    auto v = [&](const char* k) { return b.value("peer." + peer + "." + k); };
    auto r = [&](const char* k) { return rate(a, b, "peer." + peer + "." + k, secs); };
    double mib = (r("bytes_placed_out") + r("bytes_placed_in") + r("inline_bytes_out") +
                  r("inline_bytes_in")) /
                 (1 << 20);
    std::snprintf(
        line, sizeof line, "%-16s %6s %7s %10s %10s %9s %9s %10.1f %10s %6s %8s\n", peer.c_str(),
        count(double(v("queue_depth"))).c_str(), count(double(v("credit_stalls"))).c_str(),
        config::approximate_size(double(v("arena_in_use"))).c_str(),
        config::approximate_size(double(v("peer_arena_free"))).c_str(),
        count(r("messages_out")).c_str(), count(r("messages_in")).c_str(), mib,
        config::approximate_size(double(v("inline_bytes_in") + v("streamed_bytes_in"))).c_str(),
        count(double(v("registrations"))).c_str(), count(double(v("registration_hits"))).c_str());
    out << line;
  }
  out << "\nqueue: messages waiting to go; stalls: waits for the peer's credit or arena space;\n"
         "arena used: of this node's arena, by the peer's placed buffers not yet released;\n"
         "peer free: of the peer's arena, what this node may still place into;\n"
         "copied: payload bytes received inline (buffers under channel.eager_threshold ride\n"
         "in the message) or streamed (buffers larger than the arena, assembled from pieces),\n"
         "each copied once on arrival; placed buffers are not copied. regs: memory\n"
         "registrations this peer's sends made (rdma), reg hits: sends that found one\n"
         "in the node's shared cache (memory counters: what the node pinned, for all peers).\n";
}

void print_stat_json(const stat_report& a, const stat_report& b, double secs, const std::string& me,
                     std::ostream& out) {
  out << "{";
  for (const auto& [key, value] : b.info)
    out << json_text(key) << ":" << json_text(value) << ",";
  char num[64];
  std::snprintf(num, sizeof num, "%.3f", secs);
  out << "\"interval_s\":" << num << ",\"counters\":{";
  bool first = true;
  for (const auto& [key, value] : b.counters) {
    if (key.rfind("peer.", 0) == 0) {
      auto name = key.substr(5, key.rfind('.') - 5);
      if (!peers_of(b, me).count(name))
        continue;
    }
    std::snprintf(num, sizeof num, "%.1f", rate(a, b, key, secs));
    out << (first ? "" : ",") << json_text(key) << ":{\"total\":" << value << ",\"per_s\":" << num
        << "}";
    first = false;
  }
  out << "}}\n";
}

}  // namespace riomesh::cli
