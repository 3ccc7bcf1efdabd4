// Property tests of the rsocket engine over the simulated fabric: thousands
// of seeded scenarios (see scenario.hpp). A failure prints its seed;
// RIOMESH_SEED=<seed> replays exactly that one, RIOMESH_SCENARIOS=<n> runs
// more (or fewer) than the default.
#include "scenario.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

using namespace riomesh::property;

namespace {

std::uint64_t env(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

struct totals {
  std::uint64_t runs = 0, cuts = 0, stream = 0, placed = 0, maps = 0;
};

void run(std::uint64_t first_seed, std::uint64_t count, const limits& lim, totals& t) {
  if (const char* one = std::getenv("RIOMESH_SEED")) {
    first_seed = std::strtoull(one, nullptr, 0);
    count = 1;
  }
  for (std::uint64_t seed = first_seed; seed < first_seed + count; ++seed) {
    auto out = run_scenario(seed, lim);
    if (!out.ok) {
      FAIL_CHECK("seed " << seed << " failed after " << out.iterations << " steps: " << out.failure
                         << "\n  config: " << out.config << "\n  replay: RIOMESH_SEED=" << seed);
      return;
    }
    ++t.runs;
    t.cuts += out.was_cut;
    t.stream += out.stream_bytes;
    t.placed += out.placed_bytes;
    t.maps += out.maps;
  }
}

}  // namespace

TEST_CASE("random scenarios: streams, maps, riowrites, shutdowns and cuts") {
  totals t;
  run(1, env("RIOMESH_SCENARIOS", 2000), limits{}, t);
  MESSAGE(t.runs << " scenarios, " << t.cuts << " cut, " << t.stream << " stream bytes and "
                 << t.placed << " placed bytes verified, " << t.maps << " maps");
  CHECK(t.placed > 0);
  CHECK(t.cuts > 0);
}

TEST_CASE("large transfers: several MiB per direction") {
  totals t;
  limits lim;
  lim.min_stream_bytes = 2u << 20;
  lim.max_stream_bytes = 8u << 20;
  lim.allow_cut = false;
  run(1000001, env("RIOMESH_SCENARIOS", 2000) / 100 + 1, lim, t);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes verified");
}

TEST_CASE("no deadlock: tiny queues and rings, both sides sending at full rate") {
  totals t;
  limits lim;
  lim.tiny = true;
  lim.max_stream_bytes = 64u << 10;
  run(2000001, env("RIOMESH_SCENARIOS", 2000) / 4 + 1, lim, t);
  MESSAGE(t.runs << " scenarios, " << t.stream << " stream bytes verified");
}
