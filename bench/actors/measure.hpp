// One measurement of one contender, as a client process prints it and the
// bench reads it back: "result rate=... mib_s=... p50_us=... p99_us=...".
// A client may serve several servers at once (fan-out): every message goes
// to each of them, and each delivery counts.
#pragma once

#include "process_io.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench {

using clock_type = std::chrono::steady_clock;

// What a client is asked to do.
struct job {
  // "window": `window` requests open, each answered; "oneway": no answer
  // per message, at most `window` unacknowledged (oneway_driver.hpp);
  // "rtt": one request at a time, each round trip timed; "echo": the same
  // with a payload of `size` each way (the request's, sent back).
  std::string pattern;
  std::size_t size = 0;  // payload bytes per message
  std::uint64_t count = 0;
  std::uint64_t window = 16;
};

struct outcome {
  std::uint64_t delivered = 0;    // messages, over every server
  double start_s = 0, end_s = 0;  // steady clock, comparable across processes
  double cpu_s = 0;               // the client's CPU while it drove (the runner adds the servers')
  double seconds = 0;
  double msgs_per_s = 0, mib_per_s = 0;
  double p50_us = 0, p99_us = 0;
  std::uint64_t copied = 0;  // payload bytes copied (riomesh's counters; -1: not known)
  bool known_copies = false;
};

// One request at a time, each timed: "rtt" and "echo".
inline bool round_trips(const job& j) {
  return j.pattern == "rtt" || j.pattern == "echo";
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  auto rank = static_cast<std::size_t>(p * double(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank), v.end());
  return v[rank];
}

inline double since_epoch(clock_type::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// The figures of `delivered` messages of `j.size` bytes since `start`.
inline outcome finish(const job& j, std::uint64_t delivered, clock_type::time_point start,
                      std::vector<double> rtts_us) {
  outcome o;
  auto end = clock_type::now();
  o.delivered = delivered;
  o.start_s = since_epoch(start);
  o.end_s = since_epoch(end);
  o.seconds = o.end_s - o.start_s;
  o.msgs_per_s = double(delivered) / o.seconds;
  o.mib_per_s = double(delivered) * double(j.size) / (1 << 20) / o.seconds;
  o.p50_us = percentile(rtts_us, 0.5);
  o.p99_us = percentile(rtts_us, 0.99);
  return o;
}

inline void print(const outcome& o) {
  std::printf(
      "result delivered=%llu start=%.6f end=%.6f cpu_s=%.6f seconds=%.6f rate=%.1f mib_s=%.2f "
      "p50_us=%.2f p99_us=%.2f copied=%lld rss_kib=%ld\n",
      static_cast<unsigned long long>(o.delivered), o.start_s, o.end_s, o.cpu_s, o.seconds,
      o.msgs_per_s, o.mib_per_s, o.p50_us, o.p99_us,
      o.known_copies ? static_cast<long long>(o.copied) : -1LL, peak_rss_kib());
  std::fflush(stdout);
}

// The scheduler both actor contenders use: riomesh's defaults unless the
// bench was told otherwise (--policy, --threads).
inline bool stealing_policy() {
  const char* p = std::getenv("ACTOR_BENCH_POLICY");
  return p && std::string{p} == "stealing";
}
inline std::size_t scheduler_threads() {
  const char* t = std::getenv("ACTOR_BENCH_THREADS");
  return t ? std::stoul(t) : 0;  // 0: one per core
}

// The contenders: each serves (on a free port it announces; server `index`
// of several) until stdin closes, or drives one job against the servers at
// `ports`, every message to each.
using ports = std::vector<std::uint16_t>;
// riomesh, or a variant of it: "riomesh-dmabuf" (both nodes' receive
// arenas in device memory, memory.provider: dmabuf), "riomesh-gather" (the
// payload a buffer gathered from ACTOR_BENCH_GATHER pieces of the pool
// buffer, --gather N), "riomesh-tls" (streams encrypted, --encrypt).
bool is_riomesh(const std::string& kind);
int riomesh_serve(const std::string& kind, int index);
int riomesh_drive(const std::string& kind, const ports& to, const job& j);
int caf_serve(int index);
int caf_drive(const ports& to, const job& j);
// Raw TCP; `busy_poll`: the raw-spin contender (raw_contender.cpp).
int raw_serve(int index, bool busy_poll);
int raw_drive(const ports& to, const job& j, bool busy_poll);

}  // namespace bench
