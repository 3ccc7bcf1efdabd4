// Seeds resolve to the nodes to dial: each address once, within a bound,
// and a seed that gives nothing named with why.
#include <riomesh/actors/node/seeds.hpp>

#include <doctest/doctest.h>

using namespace riomesh;
using namespace riomesh::actors;

TEST_CASE("seeds: the system resolver gives numeric addresses with the seed's port") {
  std::string error;
  auto found = resolve_by_dns({"localhost", 7471}, error);
  REQUIRE_MESSAGE(!found.empty(), error);
  for (const auto& e : found) {
    CHECK(e.port == 7471);
    CHECK(((e.host == "127.0.0.1") || (e.host == "::1")));
  }
  CHECK(resolve_by_dns({"no-such-host.invalid", 1}, error).empty());
  CHECK_FALSE(error.empty());
}

TEST_CASE("seeds: several names, each address once, at most the bound, problems named") {
  seed_resolver fake = [](const config::endpoint& seed, std::string& error) {
    if (seed.host == "pods")
      return std::vector<config::endpoint>{
          {"10.0.0.1", seed.port}, {"10.0.0.2", seed.port}, {"10.0.0.1", seed.port}};
    if (seed.host == "more")
      return std::vector<config::endpoint>{{"10.0.0.2", seed.port}, {"10.0.0.3", seed.port}};
    error = "Name or service not known";
    return std::vector<config::endpoint>{};
  };
  auto r = resolve_seeds({{"pods", 7471}, {"gone", 7471}, {"more", 7471}}, fake, 16);
  CHECK(r.found ==
        std::vector<config::endpoint>{{"10.0.0.1", 7471}, {"10.0.0.2", 7471}, {"10.0.0.3", 7471}});
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0] == "seed gone:7471: Name or service not known");
  CHECK(resolve_seeds({{"pods", 7471}, {"more", 7471}}, fake, 2).found.size() == 2);
}
