// actor_bench: riomesh against CAF 0.17's middleman and raw TCP, in
// processes on loopback, every comparison made in one run so that the
// ratios hold on a noisy machine. Pairs of one client and one server;
// N clients to one server and one client fanning out to N servers (scale);
// in the VM, riomesh on rdma against rstream, riostream and perftest too.
// Prints tables, writes a CSV and, with gnuplot, a PNG chart.
//
//   actor_bench [--quick] [--no-scale] [--only TEXT] [--reps N] [--csv FILE] [--png FILE]
//               [--policy sharing|stealing] [--threads N] [--polling-us N] [--dmabuf]
//               [--gather N] [--encrypt] [--counters] [--handler-limit-us N]
//               [--max-polling-us N] [--servers-at HOST:PORT]
//   actor_bench serve KIND INDEX                  (a server, for the bench)
//   actor_bench drive KIND PORT[,PORT...] PATTERN SIZE COUNT WINDOW
//   actor_bench agent ADDRESS PORT                (on the servers' host)
//   actor_bench relay HOST PORT COMMAND...        (remote.hpp)
//
// --quick runs every kind of case with tiny counts: it checks that the
// suite runs (CI does), its figures mean nothing. --policy and --threads
// set the CAF scheduler of both actor contenders (default: riomesh's
// defaults, for both), --polling-us riomesh's channel.polling_time, to
// compare settings, --arena-min BYTES its channel.arena_min (0: fixed
// arenas, as before they were sized by demand), --rendezvous BYTES its
// channel.rendezvous (buffers from that size lent, fetched by the
// receiver). --dmabuf adds riomesh with its receive arenas in
// device memory (memory.provider: dmabuf; a DRM device, vgem in the VM):
// what staging costs where the RDMA device cannot register it. --gather N
// adds riomesh sending each payload as a buffer gathered from N pieces
// (scatter-gather), against the same payload in one piece. --encrypt adds
// riomesh with its tcp streams in TLS records after the handshake
// (channel.encrypt: on), against the same in the clear. --counters
// has every riomesh process print, on stderr as it ends, its hand-offs
// and its I/O thread's wakes, rings and spins per message delivered;
// --servers-at runs every server on another host, through the agent
// there (`actor_bench agent ADDRESS PORT`), and the clients here: riomesh on rdma
// and the rdma tools across a link; CAF and raw TCP, which serve on
// loopback, are left out.
// --handler-limit-us sets riomesh's runtime.io_handler_limit,
// --max-polling-us its channel.max_polling_time.
#include "measure.hpp"
#include "remote.hpp"
#include "report.hpp"
#include "runner.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

namespace {

using namespace bench;

int serve(const std::string& kind, int index) {
  if (is_riomesh(kind))
    return riomesh_serve(kind, index);
  if (kind == "caf")
    return caf_serve(index);
  if (kind == "raw" || kind == "raw-spin")
    return raw_serve(index, kind == "raw-spin");
  std::cerr << "actor_bench: unknown contender '" << kind << "'\n";
  return 2;
}

int drive(char** argv) {
  std::string kind = argv[0];
  ports to;
  std::istringstream list(argv[1]);
  for (std::string p; std::getline(list, p, ',');)
    to.push_back(static_cast<std::uint16_t>(std::stoul(p)));
  job j{argv[2], std::stoul(argv[3]), std::stoull(argv[4]), std::stoull(argv[5])};
  if (is_riomesh(kind))
    return riomesh_drive(kind, to, j);
  if (kind == "caf")
    return caf_drive(to, j);
  if (kind == "raw" || kind == "raw-spin")
    return raw_drive(to, j, kind == "raw-spin");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "serve") == 0)
    return serve(argv[2], std::stoi(argv[3]));
  if (argc >= 8 && std::strcmp(argv[1], "drive") == 0)
    return drive(argv + 2);
  if (argc >= 4 && std::strcmp(argv[1], "agent") == 0)
    return agent(argv[2], std::stoi(argv[3]), argv[0]);
  if (argc >= 5 && std::strcmp(argv[1], "relay") == 0)
    return relay(argv[2], argv[3], argv + 4);
  // A child that dies must not take the bench with it.
  std::signal(SIGPIPE, SIG_IGN);
  settings s;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      s.quick = true;
    else if (a == "--no-scale")
      s.scale = false;
    else if (a == "--only" && i + 1 < argc)
      s.only = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      s.reps = std::stoi(argv[++i]);
    else if (a == "--csv" && i + 1 < argc)
      s.csv = argv[++i];
    else if (a == "--png" && i + 1 < argc)
      s.png = argv[++i];
    else if (a == "--policy" && i + 1 < argc)
      ::setenv("ACTOR_BENCH_POLICY", argv[++i], 1);  // the children read it
    else if (a == "--threads" && i + 1 < argc)
      ::setenv("ACTOR_BENCH_THREADS", argv[++i], 1);
    else if (a == "--polling-us" && i + 1 < argc)
      ::setenv("ACTOR_BENCH_POLLING_US", argv[++i], 1);  // riomesh's channel.polling_time
    else if (a == "--dmabuf")
      s.dmabuf = true;
    else if (a == "--encrypt")
      s.encrypt = true;
    else if (a == "--gather" && i + 1 < argc) {
      s.gather = true;
      ::setenv("ACTOR_BENCH_GATHER", argv[++i], 1);  // pieces per payload
    } else if (a == "--handler-limit-us" && i + 1 < argc) {
      ::setenv("ACTOR_BENCH_HANDLER_US", argv[++i], 1);
    } else if (a == "--max-polling-us" && i + 1 < argc) {
      ::setenv("ACTOR_BENCH_MAX_POLLING_US", argv[++i], 1);
    } else if (a == "--rendezvous" && i + 1 < argc) {
      ::setenv("ACTOR_BENCH_RENDEZVOUS", argv[++i], 1);  // riomesh's channel.rendezvous
    } else if (a == "--arena-min" && i + 1 < argc) {
      ::setenv("ACTOR_BENCH_ARENA_MIN", argv[++i], 1);  // riomesh's channel.arena_min
    } else if (a == "--counters") {
      ::setenv("ACTOR_BENCH_COUNTERS", "1", 1);
    } else if (a == "--servers-at" && i + 1 < argc) {
      ::setenv("ACTOR_BENCH_SERVERS_AT", argv[++i], 1);  // HOST:PORT of an agent there
    } else {
      std::cerr << "usage: actor_bench [--quick] [--no-scale] [--only TEXT] [--reps N] [--csv "
                   "FILE] [--png FILE] [--policy sharing|stealing] [--threads N] [--polling-us N] "
                   "[--arena-min BYTES] [--rendezvous BYTES] "
                   "[--dmabuf] [--gather N] [--encrypt] [--counters] [--handler-limit-us N] "
                   "[--max-polling-us N] [--servers-at HOST:PORT]\n";
      return 2;
    }
  }
  s.self = argv[0];
  // The relay runs servers as this program, by this path, on the other host.
  ::setenv("ACTOR_BENCH_SELF", argv[0], 1);
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
