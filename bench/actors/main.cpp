// actor_bench: riomesh against CAF 0.17's middleman and raw TCP, two
// processes on loopback, every comparison made in one run so that the
// ratios hold on a noisy machine. Prints tables, writes a CSV and, with
// gnuplot, a PNG chart.
//
//   actor_bench [--quick] [--reps N] [--csv FILE] [--png FILE]
//   actor_bench serve riomesh|caf|raw             (a server, for the bench)
//   actor_bench drive KIND PORT PATTERN SIZE COUNT WINDOW
//
// --quick runs every case with tiny counts: it checks that the suite runs
// (CI does), its figures mean nothing.
#include "measure.hpp"
#include "report.hpp"
#include "runner.hpp"

#include <cstring>
#include <iostream>
#include <string>

namespace {

using namespace bench;

int serve(const std::string& kind) {
  if (kind == "riomesh")
    return riomesh_serve();
  if (kind == "caf")
    return caf_serve();
  if (kind == "raw")
    return raw_serve();
  std::cerr << "actor_bench: unknown contender '" << kind << "'\n";
  return 2;
}

int drive(char** argv) {
  std::string kind = argv[0];
  auto port = static_cast<std::uint16_t>(std::stoul(argv[1]));
  job j{argv[2], std::stoul(argv[3]), std::stoull(argv[4]), std::stoull(argv[5])};
  if (kind == "riomesh")
    return riomesh_drive(port, j);
  if (kind == "caf")
    return caf_drive(port, j);
  if (kind == "raw")
    return raw_drive(port, j);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "serve") == 0)
    return serve(argv[2]);
  if (argc >= 8 && std::strcmp(argv[1], "drive") == 0)
    return drive(argv + 2);
  settings s;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      s.quick = true;
    else if (a == "--reps" && i + 1 < argc)
      s.reps = std::stoi(argv[++i]);
    else if (a == "--csv" && i + 1 < argc)
      s.csv = argv[++i];
    else if (a == "--png" && i + 1 < argc)
      s.png = argv[++i];
    else {
      std::cerr << "usage: actor_bench [--quick] [--reps N] [--csv FILE] [--png FILE]\n";
      return 2;
    }
  }
  s.self = argv[0];
  auto rows = run_all(s);
  print_tables(rows, std::cout);
  if (!s.csv.empty())
    write_csv(rows, s.csv);
  if (!s.png.empty())
    draw_png(rows, s.csv, s.png);
  for (const auto& r : rows)
    if (!r.ok)
      return 1;
  return 0;
}
