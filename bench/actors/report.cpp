#include "report.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

namespace bench {
namespace {

const char* const contenders[] = {"riomesh", "caf", "raw"};

// rows by case, then by contender, in the order they ran.
std::vector<std::pair<std::string, std::map<std::string, const row*>>> by_case(
    const std::vector<row>& rows) {
  std::vector<std::pair<std::string, std::map<std::string, const row*>>> out;
  for (const auto& r : rows) {
    if (out.empty() || out.back().first != r.name)
      out.push_back({r.name, {}});
    out.back().second[r.contender] = &r;
  }
  return out;
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

std::string line(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

}  // namespace

void print_tables(const std::vector<row>& rows, std::ostream& out) {
  auto cases = by_case(rows);
  const char* rdma = std::getenv("RIOMESH_RDMA_ADDR");
  out << "\nThroughput, two processes"
      << (rdma ? " (riomesh on rdma at " + std::string{rdma} + ", the others over TCP on loopback)"
               : std::string{" on loopback"})
      << " (median of the runs; window of acked messages: 16, or 128 at 8 B)\n"
      << line("%-16s %12s %12s %12s %9s %9s %14s\n", "case", "riomesh", "caf mm", "raw tcp",
              "vs raw", "vs caf", "copied/byte");
  for (const auto& [name, c] : cases) {
    if (!c.count("riomesh") || c.at("riomesh")->j.pattern != "stream")
      continue;
    auto v = [&](const char* k) {
      if (!c.count(k) || !c.at(k)->ok)
        return 0.0;
      // Small messages compare by message rate, large ones by bytes.
      return c.at(k)->j.size <= 64 ? c.at(k)->o.msgs_per_s : c.at(k)->o.mib_per_s;
    };
    const auto& rm = *c.at("riomesh");
    double delivered = double(rm.j.count) * double(rm.j.size);
    out << line("%-16s %12.1f %12.1f %12.1f %8.2fx %8.2fx %14.3f   %s\n", name.c_str(),
                v("riomesh"), v("caf"), v("raw"), ratio(v("riomesh"), v("raw")),
                ratio(v("riomesh"), v("caf")),
                rm.o.known_copies ? double(rm.o.copied) / delivered : -1.0,
                rm.j.size <= 64 ? "msg/s" : "MiB/s");
  }
  out << "\nRound trips, 8 B request / response (us)\n"
      << line("%-16s %10s %10s %10s %10s %10s %10s %9s\n", "case", "riomesh p50", "p99", "caf p50",
              "p99", "raw p50", "p99", "vs raw");
  for (const auto& [name, c] : cases) {
    if (!c.count("riomesh") || c.at("riomesh")->j.pattern != "rtt")
      continue;
    auto p = [&](const char* k, bool p99) {
      return c.count(k) ? (p99 ? c.at(k)->o.p99_us : c.at(k)->o.p50_us) : 0.0;
    };
    out << line("%-16s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %8.2fx\n", name.c_str(),
                p("riomesh", false), p("riomesh", true), p("caf", false), p("caf", true),
                p("raw", false), p("raw", true), ratio(p("riomesh", false), p("raw", false)));
  }
  out << "\nPeak resident memory (MiB, client / server)\n"
      << line("%-16s %15s %15s %15s\n", "case", "riomesh", "caf mm", "raw tcp");
  for (const auto& [name, c] : cases) {
    std::string cells;
    for (const char* k : contenders) {
      const row* r = c.count(k) ? c.at(k) : nullptr;
      cells += line(" %7.1f / %5.1f", r ? double(r->client_rss_kib) / 1024 : 0.0,
                    r ? double(r->server_rss_kib) / 1024 : 0.0);
    }
    out << line("%-16s", name.c_str()) << cells << "\n";
  }
  for (const auto& r : rows)
    if (!r.ok)
      out << "FAILED: " << r.name << " with " << r.contender << "\n";
}

void write_csv(const std::vector<row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "case,contender,pattern,size,count,window,msgs_per_s,mib_per_s,p50_us,p99_us,"
         "copied_bytes,client_rss_kib,server_rss_kib,ok\n";
  for (const auto& r : rows)
    out << r.name << "," << r.contender << "," << r.j.pattern << "," << r.j.size << "," << r.j.count
        << "," << r.j.window << "," << r.o.msgs_per_s << "," << r.o.mib_per_s << "," << r.o.p50_us
        << "," << r.o.p99_us << "," << (r.o.known_copies ? std::to_string(r.o.copied) : "") << ","
        << r.client_rss_kib << "," << r.server_rss_kib << "," << (r.ok ? 1 : 0) << "\n";
}

void draw_png(const std::vector<row>& rows, const std::string& csv, const std::string& png) {
  auto data = png + ".dat";
  {
    std::ofstream out(data);
    out << "# case riomesh caf raw\n";
    for (const auto& [name, c] : by_case(rows)) {
      if (!c.count("riomesh") || c.at("riomesh")->j.pattern != "stream" ||
          c.at("riomesh")->j.size <= 64)
        continue;
      out << "\"" << name.substr(0, name.find(" stream")) << "\"";
      for (const char* k : contenders)
        out << " " << (c.count(k) ? c.at(k)->o.mib_per_s : 0.0);
      out << "\n";
    }
  }
  auto script = png + ".gp";
  std::ofstream(script) << "set terminal png size 900,520\n"
                        << "set output '" << png << "'\n"
                        << "set title 'Throughput on loopback, two processes ("
                        << (csv.empty() ? "" : csv) << ")'\n"
                        << "set ylabel 'MiB/s'\nset xlabel 'message size'\nset logscale y\n"
                        << "set style data histograms\nset style histogram clustered gap 1\n"
                        << "set style fill solid 0.8 border -1\nset key top left\nset grid ytics\n"
                        << "plot '" << data
                        << "' using 2:xtic(1) title 'riomesh', '' using 3 title "
                        << "'CAF 0.17 middleman', '' using 4 title 'raw TCP'\n";
  if (std::system(("gnuplot '" + script + "' 2>&1").c_str()) != 0)
    std::fprintf(stderr, "actor_bench: gnuplot failed; the data is in %s\n", data.c_str());
}

}  // namespace bench
