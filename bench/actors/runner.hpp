// Runs the cases: for each, the server and client processes per contender,
// `reps` times, the median kept. Progress on stderr as it goes.
#pragma once

#include "measure.hpp"

#include <string>
#include <vector>

namespace bench {

struct settings {
  bool quick = false;
  bool scale = true;  // the 1..64 connection and fan-out cases (tcp only)
  int reps = 3;
  std::string only;      // run only the cases whose name contains this
  bool dmabuf = false;   // riomesh again, with receive arenas in device memory
  bool gather = false;   // riomesh again, each payload gathered from pieces
  bool encrypt = false;  // riomesh again, its streams encrypted (channel.encrypt: on)
  std::string csv, png, self;
};

// One case: `clients` processes each sending to all of `servers` processes.
// "pair" is one of each; "clients" N to one server; "fan-out" one to N.
struct case_spec {
  std::string name;   // "4 KiB stream", "64 KiB, 16 clients"
  std::string group;  // "pair", "clients", "fan-out"
  job j;
  int servers = 1, clients = 1;
};

struct row {
  case_spec c;
  std::string contender;
  outcome o;         // the median run (by rate); rates over every delivery
  double cpu_s = 0;  // every process's CPU over the measured interval
  long server_rss_kib = 0, client_rss_kib = 0;  // the largest of each
  bool ok = false;
};

std::vector<row> run_all(const settings& s);

// The librdmacm and perftest programs as contenders, in the VM (rdma_tools.cpp):
// their names, and one run of one of them (false if it is missing or fails).
std::vector<std::string> rdma_tools();
bool run_rdma_tool(const std::string& tool, const job& j, row& r);

}  // namespace bench
