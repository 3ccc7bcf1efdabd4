// Hostile peers against a node in its own process (runtime_peer): each lie
// must close that one connection with a logged reason naming it, while the
// node goes on serving an honest node (this process) with intact data, and
// exits cleanly at the end (under the sanitizers too: a report fails it).
// tcp here; rdma in the VM (RIOMESH_CHANNEL=rdma), with verbs lies as well.
#include "liar.hpp"
#include "verbs_liar.hpp"

#include <cluster.hpp>
#include <process.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

namespace {

std::string log_path(const std::string& what) {
  return "/tmp/riomesh-hostile-" + what + "-" + std::to_string(::getpid()) + ".log";
}

// The victim, and an honest node connected to it that checks it still
// serves, with a fresh payload each time.
struct scene {
  explicit scene(const std::string& what)
      : log_path_(log_path(what)), victim({"node-b", "serve"}, log_path_) {
    REQUIRE(victim.started());
    honest = start_node(node_settings("node-a", {{"node-b", victim.port()}}));
    auto s = honest->remote_actor("node-b", "sink", 10s);
    REQUIRE_MESSAGE(s, error_text(*honest, s));
    sink = *s;
    still_serves();
  }
  ~scene() { std::remove(log_path_.c_str()); }

  void still_serves() {
    auto data = honest->allocate(1 << 20);
    fill(data, ++round);
    CHECK(sum_at(*honest, sink, data) == checksum(data));
  }
  config::endpoint victim_address() const {
    return {node_settings("x").node.listen.host, victim.port()};
  }
  // The lie went out: the victim must drop that liar, say why, and go on.
  void expect_cut_off(liar& l, const std::string& name, const std::string& reason) {
    CHECK_MESSAGE(victim.wait_log("lost node '" + name + "'", 15s), victim.log());
    auto log = victim.log();
    auto at = log.find("lost node '" + name + "'");
    if (at != std::string::npos && !reason.empty()) {
      auto line = log.substr(at, log.find('\n', at) - at);
      CHECK_MESSAGE(line.find(reason) != std::string::npos, line);
    }
    CHECK(l.wait_closed(15s));
    still_serves();
  }

  std::string log_path_;
  peer_process victim;
  std::unique_ptr<runtime> honest;
  caf::actor sink;
  std::uint64_t round = 0;
};

}  // namespace

TEST_CASE("hostile: envelope lies each close only the liar's connection, with the reason") {
  scene s("envelope");
  auto like = node_settings("liar");
  int n = 0;
  for (const auto& lie : envelope_lies(like.channel.arena)) {
    CAPTURE(lie.what);
    auto name = "liar-" + std::to_string(++n);
    liar l(name, s.victim_address(), like);
    l.say(lie.bytes);
    s.expect_cut_off(l, name, lie.expected_reason);
  }
  CHECK(s.victim.stop() == 0);
}

TEST_CASE("hostile: lies on the queue pair each close only the liar's connection") {
  if (fabric_under_test() != "rdma")
    return;  // rdma only (in the VM)
  scene s("verbs");
  auto like = node_settings("liar");
  int n = 0;
  for (auto lie : all_verbs_lies()) {
    CAPTURE(to_string(lie));
    auto name = "liar-" + std::to_string(++n);
    liar l(name, s.victim_address(), like);
    tell(l.channel(), lie);
    s.expect_cut_off(l, name, expected_reason(lie));
  }
  CHECK(s.victim.stop() == 0);
}
