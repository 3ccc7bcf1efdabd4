#include "prometheus_text.hpp"

#include "counter_catalog.hpp"

#include <cstdio>
#include <map>

namespace riomesh::detail {
namespace {

struct writer {
  std::string out;

  void family(const std::string& name, metric_kind kind, const char* help) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " +
           (kind == metric_kind::counter ? "counter" : "gauge") + "\n";
  }
  void sample(const std::string& name, const std::string& labels, std::uint64_t v) {
    out += name;
    if (!labels.empty())
      out += "{" + labels + "}";
    out += " " + std::to_string(v) + "\n";
  }
};

std::string series(const char* group, const char* key, metric_kind kind) {
  return std::string{"riomesh_"} + group + "_" + key +
         (kind == metric_kind::counter ? "_total" : "");
}

template <class Counters>
void node_wide(writer& w, const char* group, const std::vector<metric<Counters>>& catalog,
               const Counters& c) {
  for (const auto& m : catalog) {
    auto name = series(group, m.key, m.kind);
    w.family(name, m.kind, m.help);
    w.sample(name, {}, c.*m.field);
  }
}

// A float as Prometheus reads it: shortest round-trip form, no locale.
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

std::string label_value(const std::string& raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string prometheus_text(const metrics_snapshot& s) {
  writer w;
  std::string info;
  for (const auto& [k, v] : s.facts)
    info += (info.empty() ? "" : ",") + k + "=\"" + label_value(v) + "\"";
  w.family("riomesh_node_info", metric_kind::gauge, "The node: its name, address and fabric.");
  w.sample("riomesh_node_info", info, 1);
  w.family("riomesh_node_uptime_seconds", metric_kind::gauge, "Seconds since the node started.");
  w.out += "riomesh_node_uptime_seconds " + std::to_string(s.uptime_ms / 1000) + "." +
           std::to_string(1000 + s.uptime_ms % 1000).substr(1) + "\n";
  node_wide(w, "node", node_metrics(), s.stats.node);
  // Requests' round trips: a histogram, its buckets cumulative.
  const auto& h = s.stats.request_latency;
  const std::string hist = "riomesh_request_duration_seconds";
  w.out += "# HELP " + hist + " Requests to peers' actors, from send to answer.\n# TYPE " + hist +
           " histogram\n";
  for (std::size_t i = 0; i < h.bounds.size() && i < h.counts.size(); ++i)
    w.sample(hist + "_bucket", "le=\"" + number(h.bounds[i]) + "\"", h.counts[i]);
  w.sample(hist + "_bucket", "le=\"+Inf\"", h.count);
  w.out += hist + "_sum " + number(h.sum) + "\n";
  w.sample(hist + "_count", {}, h.count);
  node_wide(w, "memory", memory_metrics(), s.stats.memory);
  // Connections by phase: every phase named, so that a series that drops
  // to zero says so rather than vanishing.
  std::map<std::string, std::uint64_t> phases{{"setting up", 0},      {"up", 0},   {"draining", 0},
                                              {"saying farewell", 0}, {"shut", 0}, {"leaving", 0}};
  for (const auto& c : s.stats.connections)
    ++phases[c.phase];
  w.family("riomesh_connections", metric_kind::gauge, "Connections of the node, by phase.");
  for (const auto& [phase, n] : phases)
    w.sample("riomesh_connections", "phase=\"" + label_value(phase) + "\"", n);
  // Configured peers: 1 while the node routes to them.
  w.family("riomesh_peer_up", metric_kind::gauge,
           "1 if the node has a session with the configured peer, else 0.");
  for (const auto& peer : s.configured_peers) {
    bool up = false;
    for (const auto& [name, c] : s.stats.peers)
      up = up || name == peer;
    w.sample("riomesh_peer_up", "peer=\"" + label_value(peer) + "\"", up ? 1 : 0);
  }
  for (const auto& m : connection_metrics()) {
    auto name = series("peer", m.key, m.kind);
    w.family(name, m.kind, m.help);
    for (const auto& [peer, c] : s.stats.peers)
      w.sample(name, "peer=\"" + label_value(peer) + "\"", c.*m.field);
  }
  return std::move(w.out);
}

}  // namespace riomesh::detail
