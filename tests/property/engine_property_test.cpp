// Property tests of the rsocket engine over the simulated fabric: thousands
// of seeded scenarios (see scenario.hpp). A failure prints its seed;
// RIOMESH_SEED=<seed> replays exactly that one, RIOMESH_SCENARIOS=<n> runs
// more (or fewer) than the default.
#include "scenario.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace riomesh::property;

namespace {

#ifndef RIOMESH_DEFAULT_SCENARIOS
#define RIOMESH_DEFAULT_SCENARIOS 2000
#endif

std::uint64_t scenarios() {
  const char* v = std::getenv("RIOMESH_SCENARIOS");
  return v && *v ? std::strtoull(v, nullptr, 0) : RIOMESH_DEFAULT_SCENARIOS;
}

}  // namespace

TEST_CASE(
    "random scenarios: streams, maps (scatter-gather pieces among them), riowrites, rioreads "
    "of them, shutdowns and cuts") {
  totals t;
  run_many(1, scenarios(), limits{}, simulated, t);
  CHECK_MESSAGE(t.failure.empty(), t.failure);
  MESSAGE(t.runs << " scenarios, " << t.cuts << " cut, " << t.stream << " stream bytes and "
                 << t.placed << " placed bytes verified, " << t.maps << " maps (" << t.gathered
                 << " of scatter-gather pieces; " << t.split << " writes across piece ends), "
                 << t.read << " bytes read back");
  CHECK(t.placed > 0);
  CHECK(t.read > 0);
  CHECK(t.cuts > 0);
  CHECK(t.gathered > 0);
  CHECK(t.split > 0);
}

TEST_CASE("large transfers: several MiB per direction") {
  totals t;
  run_many(1000001, scenarios() / 100 + 1, limits::large(), simulated, t);
  CHECK_MESSAGE(t.failure.empty(), t.failure);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes verified");
}

TEST_CASE("no deadlock: tiny queues and rings, both sides sending at full rate") {
  totals t;
  run_many(2000001, scenarios() / 4 + 1, limits::tiny_queues(), simulated, t);
  CHECK_MESSAGE(t.failure.empty(), t.failure);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes verified");
}
