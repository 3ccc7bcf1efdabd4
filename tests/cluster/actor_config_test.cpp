// The `actors:` list of a node file, the parameters a type reads, and the
// registry that turns both into spawners: every problem with its position.
#include "config_test_util.hpp"

#include <riomesh/actor_registry.hpp>
#include <riomesh/config/actor_params.hpp>
#include <riomesh/config/print.hpp>

#include <doctest/doctest.h>

namespace riomesh::test {
namespace {

const std::string two_actors = minimal +
                               "actors:\n"
                               "  - type: demo.worker\n"
                               "    name: w1\n"
                               "    params:\n"
                               "      depth: 8\n"
                               "      size: 2MiB\n"
                               "  - type: demo.worker\n"
                               "    name: w2\n";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// depth (1-64), size, label, fast: what a registered type might read.
actor_registry demo_registry() {
  actor_registry r;
  r.add("demo.worker", "a test type", [](config::actor_params& p) {
    auto depth = p.count("depth", 4, 1, 64);
    p.size("size", 1024, 0, 1ull << 30);
    p.text("label", "x");
    p.flag("fast", false);
    if (depth == 13)
      p.fail("depth", "13 is unlucky");
    return actor_registry::spawner{};
  });
  return r;
}

std::vector<std::string> prepare_problems(const std::string& yaml) {
  auto s = config::load_string(yaml, "node.yaml");
  try {
    demo_registry().prepare(s);
  } catch (const config::error& e) {
    std::vector<std::string> out;
    for (const auto& d : e.problems())
      out.push_back(d.to_string());
    return out;
  }
  return {};
}

}  // namespace

TEST_CASE("actors: entries keep type, name, params and their positions") {
  auto s = config::load_string(two_actors, "node.yaml");
  REQUIRE(s.actors.size() == 2);
  CHECK(s.actors[0].type == "demo.worker");
  CHECK(s.actors[0].name == "w1");
  REQUIRE(s.actors[0].params.size() == 2);
  CHECK(s.actors[0].params[0].key == "depth");
  CHECK(s.actors[0].params[0].value == "8");
  CHECK(s.actors[0].params[0].where.line == 8);
  CHECK(s.actors[0].params[1].where.line == 9);
  CHECK(s.actors[1].where.line == 10);
  CHECK(s.actors[1].params.empty());
}

TEST_CASE("actors: the printed settings list them and load back the same") {
  auto s = config::load_string(two_actors, "node.yaml");
  auto again = config::load_string(config::to_yaml(s), "printed.yaml");
  REQUIRE(again.actors.size() == 2);
  CHECK(again.actors[0].params[1].value == "2MiB");
  CHECK(again.actors[1].name == "w2");
}

TEST_CASE("actors: shape errors name the entry, the key and the line") {
  CHECK(problem(minimal + "actors: 3\n") ==
        "node.yaml:4:9: actors: expected a list of {type, name, params} entries");
  CHECK(problem(minimal + "actors:\n  - name: a\n") ==
        "node.yaml:5:5: actors[0]: missing required key 'type'");
  CHECK(problem(minimal + "actors:\n  - type: t\n    name: a\n    parms: {}\n") ==
        "node.yaml:7:5: actors[0]: unknown key 'parms'; did you mean 'params'?");
  CHECK(problem(minimal + "actors:\n  - {type: t, name: a}\n  - {type: t, name: a}\n") ==
        "node.yaml:6:21: actors[1].name: an actor named 'a' is listed twice");
  CHECK(problem(minimal + "actors:\n  - {type: t, name: 'a b'}\n") ==
        "node.yaml:5:21: actors[0].name: 'a b' is not a valid name: 1 to 64 letters, digits, "
        "'-', '_' or '.', starting with a letter or digit");
  CHECK(problem(minimal + "actors:\n  - type: t\n    name: a\n    params: {x: [1, 2]}\n") ==
        "node.yaml:7:17: actors[0].params.x: expected a single value, found a list");
  CHECK(contains(problem(minimal + "actorz: []\n"),
                 "unknown section 'actorz'; did you mean 'actors'?"));
}

TEST_CASE("registry: a file's actors become spawners when every parameter reads") {
  auto s = config::load_string(two_actors, "node.yaml");
  auto plan = demo_registry().prepare(s);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].first.name == "w1");
  CHECK(plan[1].first.name == "w2");
}

TEST_CASE("registry: every problem of every entry, at the value's position") {
  auto found =
      prepare_problems(minimal +
                       "actors:\n"
                       "  - {type: demo.wroker, name: a}\n"
                       "  - type: demo.worker\n"
                       "    name: b\n"
                       "    params:\n"
                       "      depth: 65\n"
                       "      size: lots\n"
                       "      fats: true\n"
                       "  - {type: demo.worker, name: c, params: {depth: 13, fast: maybe}}\n");
  REQUIRE(found.size() == 6);
  CHECK(found[0] ==
        "node.yaml:5:5: actor 'a': unknown type 'demo.wroker'; did you mean 'demo.worker'?");
  CHECK(found[1] ==
        "node.yaml:9:14: actor 'b' (demo.worker): params.depth: 65 is out of range "
        "(1 .. 64)");
  CHECK(found[2] ==
        "node.yaml:10:13: actor 'b' (demo.worker): params.size: 'lots' is not a size "
        "such as 64KiB");
  CHECK(found[3] ==
        "node.yaml:11:13: actor 'b' (demo.worker): params.fats: unknown parameter; "
        "did you mean 'fast'?");
  CHECK(contains(found[4], "params.fast: expected true or false, found 'maybe'"));
  CHECK(contains(found[5], "params.depth: 13 is unlucky"));
}

TEST_CASE("registry: a required parameter that is missing is named with its entry") {
  actor_registry r;
  r.add("needs.broker", "", [](config::actor_params& p) {
    p.required_text("broker");
    return actor_registry::spawner{};
  });
  auto s = config::load_string(minimal + "actors:\n  - {type: needs.broker, name: n}\n", "f.yaml");
  try {
    r.prepare(s);
    FAIL("prepare accepted a missing required parameter");
  } catch (const config::error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].to_string() ==
          "f.yaml:5:5: actor 'n' (needs.broker): params.broker: required, not given");
  }
}

TEST_CASE("registry: a type registered twice is a programming error") {
  actor_registry r;
  r.add("t", "", [](config::actor_params&) { return actor_registry::spawner{}; });
  CHECK_THROWS_AS(r.add("t", "", [](config::actor_params&) { return actor_registry::spawner{}; }),
                  std::logic_error);
}

}  // namespace riomesh::test
