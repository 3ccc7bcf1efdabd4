// One measurement of one contender, as a client process prints it and the
// bench reads it back: "result rate=... mib_s=... p50_us=... p99_us=...".
#pragma once

#include "process_io.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

using clock_type = std::chrono::steady_clock;

// What a client is asked to do.
struct job {
  std::string pattern;   // "stream": window of acked messages; "rtt": round trips
  std::size_t size = 0;  // payload bytes per message
  std::uint64_t count = 0;
  std::uint64_t window = 16;
};

struct outcome {
  double seconds = 0;
  double msgs_per_s = 0, mib_per_s = 0;
  double p50_us = 0, p99_us = 0;
  std::uint64_t copied = 0;  // payload bytes copied (riomesh's counters; -1: not known)
  bool known_copies = false;
};

inline double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  auto rank = static_cast<std::size_t>(p * double(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank), v.end());
  return v[rank];
}

inline outcome finish(const job& j, clock_type::time_point start, std::vector<double> rtts_us) {
  outcome o;
  o.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  o.msgs_per_s = double(j.count) / o.seconds;
  o.mib_per_s = double(j.count) * double(j.size) / (1 << 20) / o.seconds;
  o.p50_us = percentile(rtts_us, 0.5);
  o.p99_us = percentile(rtts_us, 0.99);
  return o;
}

inline void print(const outcome& o) {
  std::printf(
      "result seconds=%.6f rate=%.1f mib_s=%.2f p50_us=%.2f p99_us=%.2f copied=%lld "
      "rss_kib=%ld\n",
      o.seconds, o.msgs_per_s, o.mib_per_s, o.p50_us, o.p99_us,
      o.known_copies ? static_cast<long long>(o.copied) : -1LL, peak_rss_kib());
  std::fflush(stdout);
}

// The contenders: each serves (on a free port it announces) until stdin
// closes, or drives one job against the server at `port`.
int riomesh_serve();
int riomesh_drive(std::uint16_t port, const job& j);
int caf_serve();
int caf_drive(std::uint16_t port, const job& j);
int raw_serve();
int raw_drive(std::uint16_t port, const job& j);

}  // namespace bench
