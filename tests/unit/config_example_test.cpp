// The annotated example that ships in examples/ must stay loadable and must
// document every key the loader knows.
#include <riomesh/config/loader.hpp>
#include <riomesh/config/print.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <sstream>

using namespace riomesh;

TEST_CASE("examples/node.yaml loads") {
  auto s = config::load_file(std::string{RIOMESH_SOURCE_DIR} + "/examples/node.yaml");
  CHECK(s.node.name == "example");
  CHECK(s.cluster.peers.size() == 2);
  REQUIRE(s.actors.size() == 1);
  CHECK(s.actors[0].type == "pubsub.broker");
}

TEST_CASE("examples/node.yaml mentions every key") {
  std::ifstream in(std::string{RIOMESH_SOURCE_DIR} + "/examples/node.yaml");
  std::string example{std::istreambuf_iterator<char>(in), {}};
  // Every "key:" line that to_yaml prints must appear in the example.
  std::istringstream printed(
      config::to_yaml(config::load_string("node: {name: n, listen: '127.0.0.1:1'}\n", "min.yaml")));
  std::string line;
  int keys = 0;
  while (std::getline(printed, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || line.find_first_not_of(' ') == colon)
      continue;
    auto key = line.substr(line.find_first_not_of(' '), colon - line.find_first_not_of(' '));
    CHECK_MESSAGE(example.find(key + ":") != std::string::npos, key);
    ++keys;
  }
  CHECK(keys >= 25);
  CHECK(example.find("\nactors:\n") != std::string::npos);
}
