#include "report.hpp"
#include "remote.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace bench {
namespace {

double ratio(double a, double b) {
  return b > 0 && a > 0 ? a / b : 0;
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

const char* unit(const case_spec& c) {
  return c.j.size <= 64 ? "msg/s" : "MiB/s";
}

// CPU over every process per delivered message, in microseconds.
double cpu_us(const row* r) {
  return r && r->ok && r->o.delivered ? r->cpu_s * 1e6 / double(r->o.delivered) : 0;
}

void pairs(const case_rows& cases, std::ostream& out) {
  const char* rdma = std::getenv("RIOMESH_RDMA_ADDR");
  out << "\nThroughput, two processes"
      << (servers_remote() ? " (riomesh on rdma, clients at " + std::string{rdma ? rdma : "?"} +
                                 ", servers at " + server_address() + ", across a link)"
          : rdma
              ? " (riomesh on rdma at " + std::string{rdma} + ", caf and raw over TCP on loopback)"
              : std::string{" on loopback"})
      << " (median of the runs)\n"
      << "one-way: no answer per message, at most 64 MiB (4..512 messages) unacknowledged;\n"
      << "window: 16 requests open (128 at 8 B), each answered (raw tcp: an 8-byte answer per "
         "request).\n"
      << "cpu: every process's CPU per delivered message (us)\n"
      << line("%-16s %11s %11s %11s %8s %8s %8s %8s %8s %12s\n", "case", "riomesh", "caf mm",
              "raw tcp", "vs raw", "vs caf", "cpu rio", "cpu caf", "cpu raw", "copied/byte");
  for (const auto& entry : cases) {
    const auto& [c, by_entry] = entry;
    const auto& by = by_entry;  // a lambda may not capture a binding (C++17)
    const row* rm = find(by, "riomesh");
    if (c.group != "pair" || round_trips(c.j) || !rm)
      continue;
    double delivered = double(rm->o.delivered) * double(c.j.size);
    const row *cf = find(by, "caf"), *rw = find(by, "raw");
    double rio = figure(rm), caf = figure(cf), raw = figure(rw);
    out << line(
        "%-16s %11.1f %11.1f %11.1f %7.2fx %7.2fx %8.2f %8.2f %8.2f %12.3f   %s\n", c.name.c_str(),
        rio, caf, raw, ratio(rio, raw), ratio(rio, caf), cpu_us(rm), cpu_us(cf), cpu_us(rw),
        rm->o.known_copies && delivered > 0 ? double(rm->o.copied) / delivered : -1.0, unit(c));
  }
  out << "\nRound trips, one request at a time (us): 8 B, and echo (the payload both ways;\n"
         "raw tcp: ping-pong; spin: raw tcp busy-polling both ends, the loopback limit);\n"
         "vs: how many of theirs fit in ours\n"
      << line("%-16s %11s %10s %10s %10s %10s %10s %9s %9s %9s %9s\n", "case", "riomesh p50", "p99",
              "caf p50", "p99", "raw p50", "p99", "spin p50", "vs raw", "vs caf", "vs spin");
  for (const auto& entry : cases) {
    const auto& [c, by_entry] = entry;
    const auto& by = by_entry;  // a lambda may not capture a binding (C++17)
    if (c.group != "pair" || !round_trips(c.j))
      continue;
    auto p = [&](const char* k, bool p99) {
      const row* r = find(by, k);
      return r ? (p99 ? r->o.p99_us : r->o.p50_us) : 0.0;
    };
    out << line("%-16s %11.1f %10.1f %10.1f %10.1f %10.1f %10.1f %9.1f %8.2fx %8.2fx %8.2fx\n",
                c.name.c_str(), p("riomesh", false), p("riomesh", true), p("caf", false),
                p("caf", true), p("raw", false), p("raw", true), p("raw-spin", false),
                ratio(p("riomesh", false), p("raw", false)),
                ratio(p("riomesh", false), p("caf", false)),
                ratio(p("riomesh", false), p("raw-spin", false)));
  }
  out << "\nPeak resident memory (MiB, client / server)\n"
      << line("%-16s %15s %15s %15s\n", "case", "riomesh", "caf mm", "raw tcp");
  for (const auto& entry : cases) {
    const auto& [c, by_entry] = entry;
    const auto& by = by_entry;  // a lambda may not capture a binding (C++17)
    if (c.group != "pair")
      continue;
    std::string cells;
    for (const char* k : {"riomesh", "caf", "raw"}) {
      const row* r = find(by, k);
      cells += line(" %7.1f / %5.1f", r ? double(r->client_rss_kib) / 1024 : 0.0,
                    r ? double(r->server_rss_kib) / 1024 : 0.0);
    }
    out << line("%-16s", c.name.c_str()) << cells << "\n";
  }
}

void scale(const case_rows& cases, std::ostream& out) {
  bool any = false;
  for (const auto& [c, by] : cases)
    any = any || c.group != "pair";
  if (!any)
    return;
  out << "\nScale on loopback: N clients to one server, one client fanning out to N servers;\n"
      << "every process's CPU per delivered message (us), the same total work at every N\n"
      << line("%-22s %11s %11s %11s %8s %8s %8s %8s %8s\n", "case", "riomesh", "caf mm", "raw tcp",
              "vs raw", "vs caf", "cpu rio", "cpu caf", "cpu raw");
  for (const auto& entry : cases) {
    const auto& [c, by_entry] = entry;
    const auto& by = by_entry;  // a lambda may not capture a binding (C++17)
    if (c.group == "pair")
      continue;
    const row *rm = find(by, "riomesh"), *cf = find(by, "caf"), *rw = find(by, "raw");
    out << line("%-22s %11.1f %11.1f %11.1f %7.2fx %7.2fx %8.2f %8.2f %8.2f   %s\n", c.name.c_str(),
                figure(rm), figure(cf), figure(rw), ratio(figure(rm), figure(rw)),
                ratio(figure(rm), figure(cf)), cpu_us(rm), cpu_us(cf), cpu_us(rw), unit(c));
  }
}

void rdma(const case_rows& cases, std::ostream& out) {
  bool any = false;
  for (const auto& [c, by] : cases)
    any = any || find(by, "rstream") || find(by, "ib_write");
  if (!any)
    return;
  out << (servers_remote() ? "\nOn rdma across the link between two hosts" : "\nOn rdma in this VM")
      << ", riomesh's typed messages against rsockets and bare RDMA writes\n"
      << "(rstream/riostream: one-way transfers; round trips: rstream's mean, perftest's "
         "typical)\n"
      << line("%-16s %11s %11s %11s %11s %10s %10s\n", "case", "riomesh", "rstream", "riostream",
              "ib_write", "vs rstream", "vs ib");
  for (const auto& entry : cases) {
    const auto& [c, by_entry] = entry;
    const auto& by = by_entry;  // a lambda may not capture a binding (C++17)
    if (c.group != "pair" || c.j.pattern == "window")
      continue;
    bool rtt = round_trips(c.j);
    auto v = [&](const char* k) {
      const row* r = find(by, k);
      return rtt ? (r && r->ok ? r->o.p50_us : 0.0) : figure(r);
    };
    auto cell = [](double x) { return x > 0 ? line("%11.1f", x) : line("%11s", "-"); };
    double rio = v("riomesh"), rs = v("rstream"), ib = v("ib_write");
    // A round trip is better when shorter: the ratios say how many of theirs fit in ours.
    out << line("%-16s ", c.name.c_str()) << cell(rio) << " " << cell(rs) << " "
        << cell(v("riostream")) << " " << cell(ib)
        << line(" %9.2fx %9.2fx   %s\n", ratio(rio, rs), ratio(rio, ib),
                rtt ? "us round trip" : unit(c));
  }
}

// riomesh against a variant of itself (`kind`): the rate (or round trip),
// each one's CPU per message, and the variant's copies per byte.
void variant(const case_rows& cases, std::ostream& out, const char* kind, const char* title,
             const char* named) {
  bool any = false;
  for (const auto& [c, by] : cases)
    any = any || find(by, kind);
  if (!any)
    return;
  out << "\n"
      << title << "\n"
      << line("%-16s %11s %11s %8s %8s %10s %12s\n", "case", "riomesh", named, "ratio", "cpu rio",
              "cpu variant", "copied/byte");
  for (const auto& entry : cases) {
    const auto& [c, by_entry] = entry;
    const auto& by = by_entry;  // a lambda may not capture a binding (C++17)
    const row *base = find(by, "riomesh"), *other = find(by, kind);
    if (c.group != "pair" || !base || !other)
      continue;
    bool rtt = round_trips(c.j);
    double h = rtt ? base->o.p50_us : figure(base), d = rtt ? other->o.p50_us : figure(other);
    double delivered = double(other->o.delivered) * double(c.j.size);
    out << line("%-16s %11.1f %11.1f %7.2fx %8.2f %10.2f %12.3f   %s\n", c.name.c_str(), h, d,
                ratio(d, h), cpu_us(base), cpu_us(other),
                other->o.known_copies && delivered > 0 ? double(other->o.copied) / delivered : -1.0,
                rtt ? "us round trip p50" : unit(c));
  }
}

}  // namespace

case_rows by_case(const std::vector<row>& rows) {
  case_rows out;
  for (const auto& r : rows) {
    if (out.empty() || out.back().first.name != r.c.name)
      out.push_back({r.c, {}});
    out.back().second[r.contender] = &r;
  }
  return out;
}

void print_tables(const std::vector<row>& rows, std::ostream& out) {
  auto cases = by_case(rows);
  pairs(cases, out);
  scale(cases, out);
  rdma(cases, out);
  variant(cases, out, "riomesh-dmabuf",
          "Receive arenas in device memory (dma-buf) against host memory, riomesh both;\n"
          "copied/byte counts the staging copies, in and out",
          "dma-buf");
  variant(cases, out, "riomesh-gather",
          "Scatter-gather: each payload a buffer gathered from pieces of the pool buffer\n"
          "(--gather N) against the same payload in one piece",
          "gathered");
  for (const auto& r : rows)
    if (!r.ok)
      out << "FAILED: " << r.c.name << " with " << r.contender << "\n";
}

void write_csv(const std::vector<row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "case,group,servers,clients,contender,pattern,size,count,window,delivered,msgs_per_s,"
         "mib_per_s,p50_us,p99_us,cpu_s,copied_bytes,client_rss_kib,server_rss_kib,ok\n";
  for (const auto& r : rows)
    out << r.c.name << "," << r.c.group << "," << r.c.servers << "," << r.c.clients << ","
        << r.contender << "," << r.c.j.pattern << "," << r.c.j.size << "," << r.c.j.count << ","
        << r.c.j.window << "," << r.o.delivered << "," << r.o.msgs_per_s << "," << r.o.mib_per_s
        << "," << r.o.p50_us << "," << r.o.p99_us << "," << r.cpu_s << ","
        << (r.o.known_copies ? std::to_string(r.o.copied) : "") << "," << r.client_rss_kib << ","
        << r.server_rss_kib << "," << (r.ok ? 1 : 0) << "\n";
}

}  // namespace bench
