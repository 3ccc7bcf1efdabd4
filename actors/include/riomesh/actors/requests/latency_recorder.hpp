// Round trips of requests to peers' actors, from the request's send to its
// answer's arrival, counted into fixed buckets: what /metrics serves as a
// Prometheus histogram. Lock-free: the I/O thread records, anyone reads.
#pragma once

#include <riomesh/stats.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace riomesh::actors {

class latency_recorder {
 public:
  // Upper bounds in microseconds, 10 us to 10 s: a request on rdma
  // hardware to one stuck behind a stalled peer.
  static constexpr std::array<std::uint64_t, 19> bounds_us{
      10,    25,    50,     100,    250,    500,     1000,    2500,    5000,    10000,
      25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};

  void record(std::chrono::nanoseconds took);
  // Cumulative counts per bound, as Prometheus wants them.
  latency_histogram snapshot() const;

 private:
  std::array<std::atomic<std::uint64_t>, bounds_us.size() + 1> counts_{};  // last: beyond
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace riomesh::actors
