// A node's figures in Prometheus's text exposition format (version 0.0.4):
// what /metrics serves. Pure: tested without a server.
#pragma once

#include <riomesh/stats.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::detail {

struct metrics_snapshot {
  node_stats stats;
  std::uint64_t uptime_ms = 0;
  // riomesh_node_info's labels: node, listen, fabric.
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<std::string> configured_peers;  // each gets riomesh_peer_up
};

std::string prometheus_text(const metrics_snapshot& s);

// A label value as the format wants it: backslash, double quote and line
// feed escaped. Peer names come from peers.
std::string label_value(const std::string& raw);

}  // namespace riomesh::detail
