// The bench's output: tables with ratios, a CSV, a gnuplot chart.
#pragma once

#include "runner.hpp"

#include <ostream>

namespace bench {

void print_tables(const std::vector<row>& rows, std::ostream& out);
void write_csv(const std::vector<row>& rows, const std::string& path);
// Throughput by size, one bar per contender (needs the CSV written first).
void draw_png(const std::vector<row>& rows, const std::string& csv, const std::string& png);

}  // namespace bench
