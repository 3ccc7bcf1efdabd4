// How `riomesh stat` shows a node's counters between two reports: a table
// in human units with a legend, or JSON (one object per report pair).
#pragma once

#include <riomesh/admin.hpp>

#include <ostream>
#include <string>

namespace riomesh::cli {

// `before` and `after` were taken `seconds` apart; `me` is the CLI's own
// node, left out of the peers.
void print_stat_table(const stat_report& before, const stat_report& after, double seconds,
                      const std::string& me, std::ostream& out);
void print_stat_json(const stat_report& before, const stat_report& after, double seconds,
                     const std::string& me, std::ostream& out);

}  // namespace riomesh::cli
