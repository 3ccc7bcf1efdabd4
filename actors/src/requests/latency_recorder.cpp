#include <riomesh/actors/requests/latency_recorder.hpp>

#include <algorithm>

namespace riomesh::actors {

void latency_recorder::record(std::chrono::nanoseconds took) {
  auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(took.count(), 0));
  auto us_ceiling = (ns + 999) / 1000;
  auto at = std::lower_bound(bounds_us.begin(), bounds_us.end(), us_ceiling) - bounds_us.begin();
  counts_[static_cast<std::size_t>(at)].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
}

latency_histogram latency_recorder::snapshot() const {
  latency_histogram h;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < bounds_us.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    h.bounds.push_back(static_cast<double>(bounds_us[i]) / 1e6);
    h.counts.push_back(running);
  }
  h.count = running + counts_.back().load(std::memory_order_relaxed);
  h.sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return h;
}

}  // namespace riomesh::actors
