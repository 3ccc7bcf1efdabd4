// The chart: throughput by message size per contender and, when the scale
// cases ran, the 64 KiB rate as clients and fan-out grow. gnuplot draws it
// from small data files written beside the PNG.
#include "report.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace bench {
namespace {

const char* const contenders[] = {"riomesh", "caf", "raw"};

// "size riomesh caf raw" per large one-way case; false if there is none.
bool write_sizes(const case_rows& cases, const std::string& path) {
  std::ofstream out(path);
  out << "# case riomesh caf raw (MiB/s)\n";
  bool any = false;
  for (const auto& [c, by] : cases) {
    if (c.group != "pair" || c.j.pattern != "oneway" || c.j.size <= 64)
      continue;
    out << "\"" << c.name.substr(0, c.name.find(" one-way")) << "\"";
    for (const char* k : contenders)
      out << " " << figure(find(by, k));
    out << "\n";
    any = true;
  }
  return any;
}

// "n clients(riomesh caf raw) fan-out(riomesh caf raw)" at 64 KiB.
bool write_scale(const case_rows& cases, const std::string& path) {
  std::map<int, std::map<std::string, double>> at;
  for (const auto& [c, by] : cases) {
    if (c.group == "pair" || c.j.size <= 64)
      continue;
    int n = c.group == "clients" ? c.clients : c.servers;
    for (const char* k : contenders)
      at[n][c.group + "/" + k] = figure(find(by, k));
  }
  std::ofstream out(path);
  out << "# n clients:riomesh caf raw fan-out:riomesh caf raw (MiB/s)\n";
  for (auto& [n, v] : at) {
    out << n;
    for (const char* g : {"clients", "fan-out"})
      for (const char* k : contenders)
        out << " " << v[std::string(g) + "/" + k];
    out << "\n";
  }
  return !at.empty();
}

}  // namespace

void draw_png(const std::vector<row>& rows, const std::string& csv, const std::string& png) {
  auto cases = by_case(rows);
  auto sizes = png + ".sizes.dat", scale = png + ".scale.dat";
  bool by_size = write_sizes(cases, sizes), by_n = write_scale(cases, scale);
  std::ofstream gp(png + ".gp");
  gp << "set terminal png noenhanced size " << (by_n ? 1400 : 900) << ",520\n"
     << "set output '" << png << "'\n";
  if (by_n)
    gp << "set multiplot layout 1,2 title 'actor_bench (" << csv << ")'\n";
  if (by_size)
    gp << "set title 'Two processes, by message size'\n"
       << "set ylabel 'MiB/s'\nset xlabel 'message size'\nset logscale y\n"
       << "set style data histograms\nset style histogram clustered gap 1\n"
       << "set style fill solid 0.8 border -1\nset key top left\nset grid ytics\n"
       << "plot '" << sizes << "' using 2:xtic(1) title 'riomesh', '' using 3 title "
       << "'CAF 0.17 middleman', '' using 4 title 'raw TCP'\n";
  if (by_n)
    gp << "set style data linespoints\nset title '64 KiB messages, total rate'\n"
       << "set xlabel 'N'\nset ylabel 'MiB/s'\nset logscale x 2\nset logscale y\n"
       << "set key bottom left\nplot '" << scale << "' using 1:2 title 'riomesh, N clients' lw 2,"
       << " '' using 1:3 title 'CAF, N clients' lw 2, '' using 1:4 title 'raw, N clients' lw 2,"
       << " '' using 1:5 title 'riomesh, fan-out N' dt 2 lw 2,"
       << " '' using 1:6 title 'CAF, fan-out N' dt 2 lw 2, '' using 1:7 title 'raw, fan-out N' dt 2"
       << " lw 2\n";
  if (by_n)
    gp << "unset multiplot\n";
  gp.close();
  if (std::system(("gnuplot '" + png + ".gp' 2>&1").c_str()) != 0)
    std::fprintf(stderr, "actor_bench: gnuplot failed; the data is in %s\n", sizes.c_str());
}

}  // namespace bench
