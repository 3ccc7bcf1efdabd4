// How the pub/sub actors tell what happens: one line per event on stdout,
// read by people and by the cluster launcher alike:
//   pubsub <role> <name>: <event> key=value key=value ...
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pubsub {

using fields = std::vector<std::pair<std::string, std::string>>;

void report(const std::string& role, const std::string& name, const std::string& event,
            const fields& values = {});
// The line report() writes, with its newline. A name or value (which may
// come from a peer) has its control bytes and backslashes as \xNN, so
// that it cannot end the line and start one of its own.
std::string report_line(const std::string& role, const std::string& name, const std::string& event,
                        const fields& values);

std::uint64_t now_ns();  // system clock: comparable across the processes of one host
std::string fixed(double value, int decimals = 1);

// Latencies of delivered samples, for percentiles. Keeps at most `limit`
// of them (every k-th past it), so that a long run stays bounded.
class latency_record {
 public:
  explicit latency_record(std::size_t limit = 1 << 20) : limit_(limit) {}
  void add(std::uint64_t ns);
  // p in [0, 1]; 0 when nothing was recorded.
  std::uint64_t percentile(double p);

 private:
  std::size_t limit_;
  std::size_t seen_ = 0, stride_ = 1;
  std::vector<std::uint64_t> kept_;
};

}  // namespace pubsub
