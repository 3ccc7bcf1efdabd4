// A member of the cluster (it has the secret) claims the name of a node
// that is connected: its session must never take the real one's place.
// With the secret only, it is refused while the real session is live; with
// node keys it cannot even prove the name. A node that really restarted
// gets back in: with keys at once (its key proves it, its new session
// replaces the old), with the secret only once the old session is found
// gone. The victim runs in its own process.
#include "liar.hpp"
#include "victim.hpp"

#include <cluster.hpp>
#include <process.hpp>

#include <riomesh/actors/handshake/node_key.hpp>
#include <riomesh/config/key_text.hpp>

#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

namespace {

std::string temp_path(const std::string& what) {
  return "/tmp/riomesh-takeover-" + what + "-" + std::to_string(::getpid());
}

// Environment for the runtime_peer children started in its scope.
child_env::vars keyed(const std::string& key, const std::string& keys) {
  return {{"RUNTIME_PEER_KEY", key}, {"RUNTIME_PEER_KEYS", keys}, {"RUNTIME_PEER_INFO", "1"}};
}

config::endpoint at(const peer_process& p) {
  return {node_settings("x").node.listen.host, p.port()};
}

}  // namespace

TEST_CASE("takeover: with the secret only, a second session for a connected name is refused") {
  auto log = temp_path("secret.log");
  peer_process victim({"node-b", "serve"}, log);
  REQUIRE(victim.started());
  auto a = start_node(node_settings("node-a", {{"node-b", victim.port()}}));
  auto sink = a->remote_actor("node-b", "sink", 10s);
  REQUIRE_MESSAGE(sink, error_text(*a, sink));
  // The impostor knows the secret and says it is node-a.
  auto why = setup_failure("node-a", at(victim), node_settings("node-a"));
  CHECK_MESSAGE(
      why.find("refused this session: a session with node 'node-a' is live") != std::string::npos,
      why);
  CHECK_MESSAGE(
      victim.wait_log("a session with node 'node-a' is live; a second one is refused", 5s),
      victim.log());
  // The real node-a still has its session: requests go to it and back.
  for (std::uint64_t i = 0; i < 20; ++i) {
    auto data = a->allocate(64 << 10);
    fill(data, i);
    CHECK(sum_at(*a, *sink, data) == checksum(data));
  }
  CHECK(victim.log().find("lost node 'node-a'") == std::string::npos);
  CHECK(victim.stop() == 0);
  std::remove(log.c_str());
}

TEST_CASE("takeover: with node keys, a member cannot claim a listed name at all") {
  key_file ka("node-a"), kb("node-b");
  auto log = temp_path("keys.log");
  child_env env(keyed(kb.path, "node-a=" + ka.public_text()));
  peer_process victim({"node-b", "serve"}, log);
  REQUIRE(victim.started());
  auto s = node_settings("node-a", {{"node-b", victim.port()}});
  s.node.key = ka.key.seed();
  auto a = start_node(s);
  auto sink = a->remote_actor("node-b", "sink", 10s);
  REQUIRE_MESSAGE(sink, error_text(*a, sink));
  // An impostor with the secret and a key of its own.
  auto forged = node_settings("node-a");
  forged.node.key = actors::node_key::generate().seed();
  auto why = setup_failure("node-a", at(victim), forged);
  CHECK_MESSAGE(!why.empty(), victim.log());
  MESSAGE(why);
  CHECK_MESSAGE(why.find("refused this session: node 'node-a' is in this node's keyring") !=
                    std::string::npos,
                why);
  CHECK_MESSAGE(victim.wait_log("proves its name with its key (node.key_file), not with the "
                                "cluster secret",
                                5s),
                victim.log());
  // And one without any key, claiming the listed name.
  why = setup_failure("node-a", at(victim), node_settings("node-a"));
  CHECK(!why.empty());
  CHECK_MESSAGE(victim.wait_log("proves its name with its key (node.key_file), not with the "
                                "cluster secret",
                                5s),
                victim.log());
  auto data = a->allocate(1 << 20);
  fill(data, 9);
  CHECK(sum_at(*a, *sink, data) == checksum(data));
  CHECK(victim.stop() == 0);
  std::remove(log.c_str());
}

TEST_CASE("takeover: a node that restarted gets back in, at once when its key proves it") {
  for (bool keys : {true, false}) {
    CAPTURE(keys);
    key_file ka("node-a"), kb("node-b");
    auto log = temp_path("restart-b.log"), old_log = temp_path("restart-a1.log"),
         new_log = temp_path("restart-a2.log");
    child_env env(keyed(keys ? kb.path : "", keys ? "node-a=" + ka.public_text() : ""));
    peer_process victim({"node-b", "serve"}, log);
    REQUIRE(victim.started());
    auto port = std::to_string(victim.port());
    ::setenv("RUNTIME_PEER_KEY", keys ? ka.path.c_str() : "", 1);
    ::setenv("RUNTIME_PEER_KEYS", keys ? ("node-b=" + kb.public_text()).c_str() : "", 1);
    peer_process old_a({"node-a", "serve", "0", "node-b", port}, old_log);
    REQUIRE(old_a.started());
    REQUIRE_MESSAGE(victim.wait_log("connected to node 'node-a'", 10s), victim.log());
    // The old node-a hangs (its session stays up until someone notices),
    // and a new process with its name and key starts.
    ::kill(old_a.pid(), SIGSTOP);
    auto started = std::chrono::steady_clock::now();
    peer_process new_a({"node-a", "serve", "0", "node-b", port}, new_log);
    REQUIRE(new_a.started());
    // On rdma a stopped process's NIC (the kernel's, with soft-RoCE) goes on
    // acknowledging, so its session looks alive until the process dies:
    // without a key, the new one is refused until then.
    bool wait_for_death = !keys && fabric_under_test() == "rdma";
    if (wait_for_death) {
      CHECK_MESSAGE(victim.wait_log("a session with node 'node-a' is live", 10s), victim.log());
      ::kill(old_a.pid(), SIGKILL);
    }
    CHECK_MESSAGE(new_a.wait_log("connected to node 'node-b'", 10s), new_a.log(), victim.log());
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (keys) {
      CHECK_MESSAGE(victim.wait_log("node 'node-a' restarted (its node key proves it)", 1s),
                    victim.log());
    } else {
      // Refused while the old session stood, let in once it was found
      // silent (tcp: the victim's peer timeout is 600 ms) or gone (rdma).
      CHECK_MESSAGE(victim.log().find("a session with node 'node-a' is live") != std::string::npos,
                    victim.log());
      if (!wait_for_death)
        CHECK_MESSAGE(victim.wait_log("silent for", 3s), victim.log());
    }
    MESSAGE(std::string(keys ? "with keys" : "secret only"), ": the restarted node-a got in after ",
            took.count(), " ms");
    ::kill(old_a.pid(), SIGCONT);
    old_a.kill9();
    CHECK(new_a.stop() == 0);
    CHECK(victim.stop() == 0);
    for (auto* p : {&log, &old_log, &new_log})
      std::remove(p->c_str());
  }
}
