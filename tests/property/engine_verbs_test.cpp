// The engine's property scenarios (scenario.hpp) on real verbs, in the VM:
// the same seeds' configurations and application actions, with the device
// placing the writes. Fewer seeds than on the simulated fabric (the VM's
// CPU is emulated), no cuts (a pulled cable is the simulation's to model).
// RIOMESH_SCENARIOS=<n> runs more, RIOMESH_SEED=<seed> one.
#include "scenario.hpp"
#include "verbs_link.hpp"

#include <doctest/doctest.h>

#include <cstdlib>

using namespace riomesh::property;

namespace {

std::uint64_t scenarios() {
  const char* v = std::getenv("RIOMESH_SCENARIOS");
  return v && *v ? std::strtoull(v, nullptr, 0) : 200;
}

}  // namespace

TEST_CASE(
    "verbs: random scenarios: streams, maps (scatter-gather pieces among them), riowrites, "
    "rioreads of them, shutdowns") {
  totals t;
  run_many(1, scenarios(), limits{}, over_verbs, t);
  CHECK_MESSAGE(t.failure.empty(), t.failure);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes and " << t.placed
                 << " placed bytes verified, " << t.maps << " maps (" << t.gathered
                 << " of scatter-gather pieces; " << t.split << " writes across piece ends), "
                 << t.read << " bytes read back");
  CHECK(t.placed > 0);
  CHECK(t.gathered > 0);
  CHECK(t.read > 0);
}

TEST_CASE("verbs: large transfers: several MiB per direction") {
  totals t;
  run_many(1000001, scenarios() / 20 + 1, limits::large(), over_verbs, t);
  CHECK_MESSAGE(t.failure.empty(), t.failure);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes verified");
}

TEST_CASE("verbs: no deadlock: tiny queues and rings, both sides sending at full rate") {
  totals t;
  run_many(2000001, scenarios() / 4 + 1, limits::tiny_queues(), over_verbs, t);
  CHECK_MESSAGE(t.failure.empty(), t.failure);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes verified");
}
