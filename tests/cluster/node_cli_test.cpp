// riomesh-node and the riomesh CLI as users run them: real processes on
// loopback. A node starts from its file or says why not, answers ping and
// stat, and stops cleanly on SIGTERM and SIGINT.
#include <node_process.hpp>

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using pubsub::launch::node_process;
using namespace std::chrono_literals;

const std::string bin = RIOMESH_BINARY_DIR;
const std::string cluster = std::string{RIOMESH_SOURCE_DIR} + "/examples/pubsub/cluster/";

// Runs a process to its end (at most `limit`), all its output in `out`.
int run(const std::vector<std::string>& argv, std::string& out, std::chrono::seconds limit = 30s) {
  node_process p("cmd", argv);
  p.start();
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!p.reap() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& l : p.read_lines())
      out += l + "\n";
    std::this_thread::sleep_for(5ms);
  }
  for (const auto& l : p.read_lines())
    out += l + "\n";
  REQUIRE_MESSAGE(!p.running(), argv[0] << " " << argv[1] << " did not end");
  return p.exit_code();
}

// Reads a running node's output until a line holds `what`; false after `limit`.
bool wait_for(node_process& p, const std::string& what, std::string& seen,
              std::chrono::seconds limit = 20s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& l : p.read_lines()) {
      seen += l + "\n";
      if (l.find(what) != std::string::npos)
        return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

int stop(node_process& p, int sig, std::string& seen) {
  p.signal(sig);
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (!p.reap() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  for (const auto& l : p.read_lines())
    seen += l + "\n";
  REQUIRE_MESSAGE(!p.running(), p.name() << " ignored the signal");
  return p.exit_code();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string node() {
  return bin + "/tools/riomesh-node";
}
std::string cli() {
  return bin + "/tools/riomesh";
}

}  // namespace

TEST_CASE("riomesh-node: a bad file stops it before it listens, every problem with its line") {
  auto path = "/tmp/riomesh-bad-node-" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "node:\n  name: n\n  listen: 127.0.0.1:0\n"
                         "actors:\n"
                         "  - {type: pubsub.publisher, name: p, params: {size: huge}}\n"
                         "  - {type: pubsub.sink, name: s}\n";
  std::string out;
  CHECK(run({node(), "--config", path}, out) == 1);
  CHECK(has(out, path + ":5:54: actor 'p' (pubsub.publisher): params.size: 'huge' is not a size"));
  CHECK(has(out, path + ":5:54: actor 'p' (pubsub.publisher): params.broker: required") == false);
  CHECK(has(out, "params.broker: required, not given"));
  CHECK(has(out, path + ":6:5: actor 's': unknown type 'pubsub.sink'"));
  CHECK(has(out, "the node did not start"));
  std::string checked;
  CHECK(run({node(), "--config", path, "--check"}, checked) == 1);
  ::unlink(path.c_str());
}

TEST_CASE("riomesh-node: --check and --set, and a usage error") {
  std::string out;
  CHECK(run({node(), "--config", cluster + "publisher.yaml", "--check"}, out) == 0);
  CHECK(has(out, "ok (node 'pub-node', 1 actor)"));
  out.clear();
  CHECK(run({node(), "--config", cluster + "publisher.yaml", "--check", "--set", "pub-1.rate=fast"},
            out) == 1);
  CHECK(has(out,
            "--set pub-1.rate=fast: actor 'pub-1' (pubsub.publisher): params.rate: "
            "expected a whole number, found 'fast'"));
  out.clear();
  CHECK(run({node(), "--config", cluster + "publisher.yaml", "--set", "nobody.rate=1"}, out) == 1);
  CHECK(has(out, "the file lists no actor named 'nobody'"));
  out.clear();
  CHECK(run({node(), "--bogus"}, out) == 2);
  CHECK(has(out, "unknown option '--bogus'"));
}

TEST_CASE("riomesh-node and the CLI: ping, stat, a taken port, SIGTERM and SIGINT") {
  node_process broker("broker", {node(), "--config", cluster + "broker.yaml"});
  node_process sub("sub", {node(), "--config", cluster + "sub-1.yaml"});
  broker.start();
  std::string broker_log, sub_log;
  REQUIRE(wait_for(broker, "actor 'broker' (pubsub.broker) published", broker_log));
  sub.start();
  REQUIRE(wait_for(broker, "subscriber_joined name=sub-1", broker_log));

  SUBCASE("ping and stat") {
    std::string out;
    CHECK(run({cli(), "ping", "broker", "--config", cluster + "sub-1.yaml", "--count", "3",
               "--interval", "20ms"},
              out) == 0);
    CHECK(has(out, "reply from broker (127.0.0.1:7481): seq=3"));
    CHECK(has(out, "3 sent, 3 replies, round trip min"));
    out.clear();
    CHECK(run({cli(), "stat", "broker", "--at", "127.0.0.1:7481", "--interval", "200ms"}, out) ==
          0);
    CHECK(has(out, "node broker (pid "));
    CHECK(has(out, "fabric: tcp: no RDMA device found"));
    CHECK(has(out, "messages_in"));
    CHECK(has(out, "\nsub-node-1 "));    // the subscriber's connection, with its counters
    CHECK(!has(out, "\nriomesh-cli-"));  // not the CLI's own
    CHECK(has(out, "arena used"));
  }
  SUBCASE("a node that is not there, and one the file does not name") {
    std::string out;
    CHECK(run({cli(), "ping", "ghost", "--at", "127.0.0.1:1", "--count", "1"}, out) == 1);
    CHECK(has(out, "node 'ghost' at 127.0.0.1:1 does not answer: riomesh: not_connected"));
    out.clear();
    CHECK(run({cli(), "ping", "ghost", "--config", cluster + "sub-1.yaml"}, out) == 2);
    CHECK(has(out, "names no node 'ghost'"));
  }
  SUBCASE("a second node on the same port says so and exits 1") {
    std::string out;
    CHECK(run({node(), "--config", cluster + "broker.yaml"}, out) == 1);
    CHECK(has(out, "node 'broker' cannot start"));
    CHECK(has(out, "127.0.0.1:7481"));
  }
  CHECK(stop(sub, SIGINT, sub_log) == 0);
  CHECK(has(sub_log, "stopping on SIGINT"));
  CHECK(stop(broker, SIGTERM, broker_log) == 0);
  CHECK(has(broker_log, "stopping on SIGTERM"));
  CHECK(has(broker_log, "info: stopped"));
}
