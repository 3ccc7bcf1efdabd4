#include "config_test_util.hpp"

#include <riomesh/config/command_line.hpp>

#include <chrono>
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

TEST_CASE("--setting gives any key of the file for one run, a later one winning") {
  const char* argv[] = {"riomesh-node",
                        "--config",
                        "n.yaml",
                        "--setting",
                        "channel.peer_timeout=15s;channel.keepalive=2s",
                        "--setting=channel.peer_timeout=20s"};
  ::unsetenv("RIOMESH_SETTINGS");
  auto cmd = config::parse_command_line(6, const_cast<char**>(argv), 1, {"--config"}, {});
  auto s = config::load_string(test::minimal, "node.yaml", ".", cmd.extra);
  CHECK(s.channel.peer_timeout == std::chrono::seconds(20));
  CHECK(s.channel.keepalive == std::chrono::seconds(2));
}

TEST_CASE("RIOMESH_SETTINGS gives keys from the environment, the command line winning") {
  ::setenv("RIOMESH_SETTINGS", "channel.peer_timeout=15s; channel.arena=8MiB", 1);
  auto env = config::overrides::from_environment();
  ::unsetenv("RIOMESH_SETTINGS");
  REQUIRE(env.settings.size() == 2);
  config::overrides cmd;
  cmd.add_settings("channel.arena=16MiB", "--setting");
  env.merge(cmd);
  auto s = config::load_string(test::minimal, "node.yaml", ".", env);
  CHECK(s.channel.peer_timeout == std::chrono::seconds(15));
  CHECK(s.channel.arena == 16u << 20);
}

TEST_CASE("a bad --setting names itself: an unknown key, a bad value, no '='") {
  // The one problem the minimal file has with `item` given by --setting.
  auto problem_with = [](const char* item) {
    config::overrides o;
    o.add_settings(item, "--setting");
    return test::problem(test::minimal, o);
  };
  CHECK(problem_with("channel.nope=1")
            .rfind("--setting channel.nope=1: channel.nope: unknown key 'nope'", 0) == 0);
  CHECK(problem_with("channel.peer_timeot=15s") ==
        "--setting channel.peer_timeot=15s: channel.peer_timeot: unknown key 'peer_timeot'; did "
        "you mean 'peer_timeout'?");
  CHECK(problem_with("peer_timeout=15s").find("(an override is SECTION.KEY=VALUE)") !=
        std::string::npos);
  CHECK(problem_with("cluster.peers=[]") ==
        "--setting cluster.peers=[]: cluster.peers: the peers are the file's to list, not an "
        "override's");
  CHECK(problem_with("channel.peer_timeout=soon")
            .rfind("--setting channel.peer_timeout=soon: channel.peer_timeout: ", 0) == 0);
  config::overrides none;
  CHECK_THROWS_WITH(none.add_settings("channel.peer_timeout", "RIOMESH_SETTINGS"),
                    "RIOMESH_SETTINGS: 'channel.peer_timeout' is not SECTION.KEY=VALUE");
}
