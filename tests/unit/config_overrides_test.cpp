#include "config_test_util.hpp"

#include <cstdlib>

using namespace riomesh;

namespace {

config::overrides cli(const char* listen, const char* fabric, const char* level) {
  config::overrides o;
  if (listen)
    o.listen = config::override_value{listen, "--listen"};
  if (fabric)
    o.fabric = config::override_value{fabric, "--fabric"};
  if (level)
    o.log_level = config::override_value{level, "--log-level"};
  return o;
}

}  // namespace

TEST_CASE("overrides replace the file's listen address, fabric and log level") {
  auto s = config::load_string(test::minimal, "node.yaml", ".", cli("[::1]:9000", "tcp", "error"));
  CHECK(s.node.listen == config::endpoint{"::1", 9000});
  CHECK(s.node.fabric == config::fabric_kind::tcp);
  CHECK(s.logging.level == config::log_level::error);
}

TEST_CASE("a bad override names the option") {
  CHECK(test::problem(test::minimal, cli(nullptr, "rdma", nullptr)) ==
        "--fabric: node.fabric: 'rdma' is not one of auto, verbs, tcp");
  CHECK(test::problem(test::minimal, cli("nowhere", nullptr, nullptr)) ==
        "--listen: node.listen: malformed address 'nowhere': expected host:port (e.g. "
        "127.0.0.1:7471)");
}

TEST_CASE("an override is checked like the file: a public address needs a secret") {
  CHECK(test::problem(test::minimal, cli("0.0.0.0:7471", nullptr, nullptr)) ==
        "--listen: node.listen: 0.0.0.0:7471 is not a loopback address, and the cluster has "
        "neither a secret_file nor keys; set cluster.secret_file or cluster.keys, or "
        "cluster.insecure: true to accept unauthenticated peers");
}

TEST_CASE("environment overrides, and the command line winning over them") {
  ::setenv("RIOMESH_FABRIC", "tcp", 1);
  ::setenv("RIOMESH_LOG_LEVEL", "warn", 1);
  ::unsetenv("RIOMESH_LISTEN");
  auto env = config::overrides::from_environment();
  ::unsetenv("RIOMESH_FABRIC");
  ::unsetenv("RIOMESH_LOG_LEVEL");
  REQUIRE(env.fabric);
  CHECK(env.fabric->source == "environment RIOMESH_FABRIC");
  CHECK_FALSE(env.listen);
  env.merge(cli(nullptr, "verbs", nullptr));
  auto s = config::load_string(test::minimal, "node.yaml", ".", env);
  CHECK(s.node.fabric == config::fabric_kind::verbs);
  CHECK(s.logging.level == config::log_level::warn);
}

TEST_CASE("a broken file and a bad override are reported together, the file's first") {
  auto all = test::problems("node:\n  name: n1\n", cli(nullptr, "rdma", nullptr));
  REQUIRE(all.size() == 2);
  CHECK(all[0] == "node.yaml:1:1: node: missing required key 'listen'");
  CHECK(all[1] == "--fabric: node.fabric: 'rdma' is not one of auto, verbs, tcp");
}
