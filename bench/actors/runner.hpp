// Runs the cases: for each, a server and a client process per contender,
// `reps` times, the median kept. Progress on stderr as it goes.
#pragma once

#include "measure.hpp"

#include <string>
#include <vector>

namespace bench {

struct settings {
  bool quick = false;
  int reps = 3;
  std::string csv, png, self;
};

struct row {
  std::string name;  // "4 KiB stream", "8 B round trip"
  std::string contender;
  job j;
  outcome o;  // the median run (by rate)
  long server_rss_kib = 0, client_rss_kib = 0;
  bool ok = false;
};

std::vector<row> run_all(const settings& s);

}  // namespace bench
