// What the actor contenders' client drivers share: each driver (one per
// target) reports a driver_result, and drive_all starts them together on
// "go" and merges what they report into one outcome.
#pragma once

#include "measure.hpp"

#include <future>
#include <vector>

namespace bench {

struct driver_result {
  bool ok = false;
  std::vector<double> rtts;  // round trips timed, in microseconds ("rtt")
};

// Waits for "go", calls `start(i, done)` for each of `targets` drivers (it
// spawns one, which sets `done` when finished) and waits for all: the
// outcome counts every delivery, or is empty if one failed.
template <class Start>
outcome drive_all(const job& j, std::size_t targets, Start start) {
  if (!connected_await_go())
    return {};
  auto cpu = cpu_seconds();
  auto begin = clock_type::now();
  std::vector<std::promise<driver_result>> done(targets);
  for (std::size_t i = 0; i < targets; ++i)
    start(i, &done[i]);
  std::vector<double> rtts;
  bool ok = true;
  for (auto& d : done) {
    auto r = d.get_future().get();
    ok = ok && r.ok;
    rtts.insert(rtts.end(), r.rtts.begin(), r.rtts.end());
  }
  if (!ok)
    return {};
  auto o = finish(j, j.count * targets, begin, std::move(rtts));
  o.cpu_s = cpu_seconds() - cpu;
  return o;
}

}  // namespace bench
