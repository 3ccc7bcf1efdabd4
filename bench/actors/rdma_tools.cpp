// rdma-core's rsocket programs and perftest as contenders in the VM, so
// that riomesh on rdma is compared with them in the same run:
//   rstream      rsockets send/recv (what riomesh's rdma channel speaks)
//   riostream    rsockets with riowrite, the zero-copy extension
//   ib_write     perftest's ib_write_bw / ib_write_lat: bare RDMA writes,
//                the floor of the device
// Each runs as its own server and client on the VM's one soft-RoCE device,
// or with --servers-at its server on the other host.
#include "child.hpp"
#include "remote.hpp"
#include "runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace bench {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

bool on_path(const std::string& program) {
  std::istringstream dirs(env_or("PATH", "/usr/bin"));
  for (std::string d; std::getline(dirs, d, ':');)
    if (::access((d + "/" + program).c_str(), X_OK) == 0)
      return true;
  return false;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

// Runs `server` then, once it had time to listen, `client`; the client's
// output lines, or none if either failed.
std::vector<std::string> run_pair(std::vector<std::string> server,
                                  std::vector<std::string> client) {
  auto bounded = [](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"/usr/bin/timeout", "120"});
    return argv;
  };
  child srv(on_server_host(bounded(server)));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<std::string> out, ignored;
  child cl(bounded(client));
  bool ok = cl.finish(out);
  ok = srv.finish(ignored) && ok;
  if (!ok)
    out.clear();
  return out;
}

int next_port() {
  static int port = 7900 + static_cast<int>(::getpid() % 500) * 8;
  return ++port;
}

// perftest: the first row that starts with two numbers holds the figures.
std::vector<std::string> perftest_row(const std::vector<std::string>& lines) {
  for (const auto& l : lines) {
    auto w = words(l);
    if (w.size() >= 5 && std::isdigit(static_cast<unsigned char>(w[0][0])) &&
        std::isdigit(static_cast<unsigned char>(w[1][0])))
      return w;
  }
  return {};
}

// rstream / riostream: "name size xfers iters bytes 1.23s Gb/sec usec/xfer"
// on the line after the header. usec/xfer is a transfer's share of the
// whole run (a round trip's half in the latency test): more digits than
// the seconds or the Gb/sec column.
double rstream_usec_per_xfer(const std::vector<std::string>& lines) {
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto w = words(lines[i]);
    if (w.size() >= 8)
      return std::stod(w[7]);
  }
  return 0;
}

void set_rate(row& r, double msgs_per_s) {
  r.o.msgs_per_s = msgs_per_s;
  r.o.mib_per_s = msgs_per_s * double(r.c.j.size) / (1 << 20);
  r.o.delivered = r.c.j.count;
  r.o.seconds = msgs_per_s > 0 ? double(r.o.delivered) / msgs_per_s : 0;
}

bool run_rsocket(const std::string& tool, const job& j, row& r) {
  auto addr = server_address();
  bool rtt = round_trips(j);
  auto port = std::to_string(next_port());
  // Round trips: one transfer per iteration; streams: count transfers
  // each way in one iteration.
  auto count = std::to_string(rtt ? 1 : j.count), iters = std::to_string(rtt ? j.count : 1);
  auto size = std::to_string(j.size);
  auto out = run_pair({tool, "-b", addr, "-p", port, "-S", size, "-C", count, "-I", iters},
                      {tool, "-s", addr, "-p", port, "-S", size, "-C", count, "-I", iters});
  double usec = rstream_usec_per_xfer(out);
  if (usec <= 0)
    return false;
  if (rtt) {
    r.o.p50_us = r.o.p99_us = 2 * usec;  // a mean: rstream prints no percentiles
    set_rate(r, 1e6 / (2 * usec));
  } else {
    set_rate(r, 1e6 / usec);
  }
  return true;
}

bool run_perftest(const job& j, row& r) {
  auto addr = server_address();
  auto dev = env_or("RIOMESH_RDMA_DEVICE", "rxe0");
  bool rtt = round_trips(j);
  auto tool = rtt ? "ib_write_lat" : "ib_write_bw";
  auto size = std::to_string(j.size), port = std::to_string(next_port());
  auto iterations = std::to_string(std::max<std::uint64_t>(j.count, 5));  // perftest's minimum
  // -F: under emulation its clock check (r^2 of the cycle counter) fails at random.
  std::vector<std::string> args{tool, "-F", "-d", dev,        "-x", "1",
                                "-s", size, "-n", iterations, "-p", port};
  if (!rtt)
    args.push_back("--report_gbits");
  auto client = args;
  client.push_back(addr);
  auto w = perftest_row(run_pair(args, client));
  if (rtt) {
    // #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%,
    // one way: half a round trip.
    if (w.size() < 8)
      return false;
    r.o.p50_us = 2 * std::stod(w[4]);
    r.o.p99_us = 2 * std::stod(w[7]);
    set_rate(r, 1e6 / r.o.p50_us);
    return true;
  }
  // #bytes #iterations BW_peak BW_average MsgRate[Mpps]
  if (w.size() < 5)
    return false;
  set_rate(r, std::stod(w[4]) * 1e6);
  return true;
}

}  // namespace

std::vector<std::string> rdma_tools() {
  return {"rstream", "riostream", "ib_write"};
}

bool run_rdma_tool(const std::string& tool, const job& j, row& r) {
  if (round_trips(j) && tool == "riostream")
    return true;  // rstream stands for rsockets' round trip; riowrite adds nothing there
  for (auto program : tool == "ib_write" ? std::vector<std::string>{"ib_write_bw", "ib_write_lat"}
                                         : std::vector<std::string>{tool})
    if (!on_path(program)) {
      std::fprintf(stderr, "actor_bench: %s not found (tools/deps.sh installs it)\n",
                   program.c_str());
      return false;
    }
  // The tools give the server no way to say it listens: the client starts
  // after a pause, and on a loaded machine it may come too early ("Couldn't
  // connect", "Connection refused"). A failed pair runs again, on a new port.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    if (tool == "ib_write" ? run_perftest(j, r) : run_rsocket(tool, j, r))
      return true;
    std::fprintf(stderr, " (%s failed, attempt %d of 3)", tool.c_str(), attempt);
  }
  return false;
}

}  // namespace bench
