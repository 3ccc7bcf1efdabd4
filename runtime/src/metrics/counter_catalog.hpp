// Every counter a node reports, named once: `riomesh stat` shows them by
// these keys ("node.messages_out", "peer.<name>.queue_depth") and /metrics
// serves them as Prometheus series (riomesh_node_messages_out_total), with
// these kinds and help texts.
#pragma once

#include <riomesh/stats.hpp>

#include <cstdint>
#include <vector>

namespace riomesh::detail {

enum class metric_kind {
  counter,  // only grows (Prometheus: rate() applies)
  gauge,    // a level now
};

template <class Counters>
struct metric {
  const char* key;  // after "node.", "memory." or "peer.<name>."
  std::uint64_t Counters::*field;
  metric_kind kind;
  const char* help;
};

const std::vector<metric<node_counters>>& node_metrics();
const std::vector<metric<memory_counters>>& memory_metrics();
const std::vector<metric<connection_counters>>& connection_metrics();

}  // namespace riomesh::detail
