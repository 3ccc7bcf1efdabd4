// When to dial the configured peers: at once at start, again after a
// failed attempt or a lost connection, with a delay that doubles per
// failure in a row (from `first` up to `cap`) and a random spread, so a
// cluster restarting together does not dial in lockstep. A connection that
// held for `stable` resets the delay. Pure logic with the time passed in:
// the node actor asks due(now) and dials what it returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace riomesh::actors {

class redial_schedule {
 public:
  using clock = std::chrono::steady_clock;
  struct limits {
    std::chrono::milliseconds first{100};
    std::chrono::milliseconds cap{10000};
    std::chrono::milliseconds stable{5000};
    double spread = 0.2;  // each delay is scaled by a factor in [1 - spread, 1 + spread]
  };

  redial_schedule(const limits& l, std::uint64_t seed) : limits_(l), rng_(seed) {}

  // A configured peer, due at once.
  void add(const std::string& peer, clock::time_point now);
  // Peers due now; each is "dialing" until the outcome is reported.
  std::vector<std::string> due(clock::time_point now);
  void connected(const std::string& peer, clock::time_point now);
  // A dial that failed, or a connection that ended: due again later.
  void failed(const std::string& peer, clock::time_point now);
  // When the next peer falls due, if any waits.
  std::optional<clock::time_point> next(clock::time_point now) const;
  // Failures in a row for `peer` (0 when connected and stable).
  unsigned failures(const std::string& peer) const;

 private:
  enum class phase { waiting, dialing, connected };
  struct peer_state {
    phase at = phase::waiting;
    clock::time_point due{}, since{};
    unsigned failures = 0;
  };
  std::chrono::milliseconds delay(unsigned failures);

  limits limits_;
  std::mt19937_64 rng_;
  std::map<std::string, peer_state> peers_;
};

}  // namespace riomesh::actors
