// The bench's output: tables with ratios, a CSV, a gnuplot chart.
#pragma once

#include "runner.hpp"

#include <map>
#include <ostream>

namespace bench {

void print_tables(const std::vector<row>& rows, std::ostream& out);
void write_csv(const std::vector<row>& rows, const std::string& path);
// Throughput by size per contender and, if scale cases ran, the rate as
// clients and fan-out grow (chart.cpp; needs the CSV written first).
void draw_png(const std::vector<row>& rows, const std::string& csv, const std::string& png);

// Rows by case, then by contender, in the order they ran.
using case_rows = std::vector<std::pair<case_spec, std::map<std::string, const row*>>>;
case_rows by_case(const std::vector<row>& rows);

inline const row* find(const std::map<std::string, const row*>& by, const std::string& who) {
  auto it = by.find(who);
  return it == by.end() ? nullptr : it->second;
}

// What a case compares: messages per second at 64 B and below, else MiB/s.
inline double figure(const row* r) {
  if (!r || !r->ok)
    return 0;
  return r->c.j.size <= 64 ? r->o.msgs_per_s : r->o.mib_per_s;
}

}  // namespace bench
