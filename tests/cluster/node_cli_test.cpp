// riomesh-node and the riomesh CLI as users run them: real processes on
// loopback. A node starts from its file or says why not, answers ping and
// stat, and stops cleanly on SIGTERM and SIGINT.
#include <node_process.hpp>

#include <riomesh/config/loader.hpp>
#include <riomesh/config/secret_file.hpp>

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using pubsub::launch::node_process;
using namespace std::chrono_literals;

const std::string bin = RIOMESH_BINARY_DIR;

// The example cluster's folder, its secret made as pubsub-cluster makes it
// on a first run (these tests run its nodes by hand).
std::string cluster_dir() {
  auto dir = std::string{RIOMESH_SOURCE_DIR} + "/examples/pubsub/cluster/";
  auto secret = riomesh::config::secret_file_named_in(dir + "broker.yaml");
  std::string error;
  if (!secret.empty() && !std::filesystem::exists(secret))
    if (!riomesh::config::make_secret_file(secret, error) && !std::filesystem::exists(secret))
      throw std::runtime_error(error);
  return dir;
}
const std::string cluster = cluster_dir();

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
    // By address, without the cluster's secret: refused, and told why.
    CHECK(run({cli(), "stat", "broker", "--at", "127.0.0.1:7481", "--interval", "200ms"}, out) ==
          1);
    CHECK(has(out, "the peer did not prove the cluster secret"));
    out.clear();
    auto secret = riomesh::config::secret_file_named_in(cluster + "broker.yaml");
    CHECK(run({cli(), "stat", "broker", "--at", "127.0.0.1:7481", "--secret-file", secret,
               "--interval", "200ms"},
              out) == 0);
    CHECK(has(out, "node broker (pid "));
    CHECK(has(out, "fabric: tcp: no RDMA device found"));
    CHECK(has(out, "messages_in"));
    CHECK(has(out, "\nsub-node-1 "));    // the subscriber's connection, with its counters
    CHECK(!has(out, "\nriomesh-cli-"));  // not the CLI's own
    CHECK(has(out, "arena used"));
    CHECK(has(out, "copied: payload bytes received inline"));  // the columns explained
    out.clear();
    CHECK(run({cli(), "stat", "broker", "--at", "127.0.0.1:7481", "--secret-file", secret,
               "--interval", "100ms", "--watch", "--count", "2", "--json"},
              out) == 0);
    CHECK(std::count(out.begin(), out.end(), '\n') == 2);  // one object per interval
    CHECK(has(out, "{\"node\":\"broker\","));
    CHECK(has(out, "\"node.messages_in\":{\"total\":"));
    CHECK(has(out, "\"peer.sub-node-1.queue_depth\":"));
    out.clear();
    CHECK(run({cli(), "ls", "broker", "--at", "127.0.0.1:7481", "--secret-file", secret}, out) ==
          0);
    CHECK(has(out, "2 names published on node broker"));
    INFO(out);
    // The admin actor is typed: its interface, one message type per line.
    CHECK(has(out, "riomesh.admin\n    "));
    CHECK(has(out, "riomesh::stat_report"));
    // The broker's connections, each an actor: the publisher's and the
    // subscribers' (accepted, up), and the CLI's own.
    CHECK(has(out, " connections\n"));
    CHECK(has(out, "actor    peer"));
    CHECK(has(out, " sub-node-1 "));
    CHECK(has(out, " up "));
    CHECK(has(out, " accepted"));
  }
  SUBCASE("a node that is not there, and one the file does not name") {
    std::string out;
    // A fabric this machine may lack: a clean error and exit 1, never an
    // abort (with an RDMA device, nobody answers there: 1 as well).
    CHECK(run({cli(), "ping", "ghost", "--at", "127.0.0.1:1", "--fabric", "verbs", "--count", "1"},
              out) == 1);
    CHECK(out.find("terminate called") == std::string::npos);
    CHECK((has(out, "riomesh ping: ") || has(out, "does not answer")));
    out.clear();
    CHECK(run({cli(), "ping", "ghost", "--at", "127.0.0.1:1", "--count", "1"}, out) == 1);
    CHECK(has(out, "node 'ghost' at 127.0.0.1:1 does not answer: riomesh: not_connected"));
    out.clear();
    CHECK(run({cli(), "ping", "ghost", "--config", cluster + "sub-1.yaml"}, out) == 2);
    CHECK(has(out, "names no node 'ghost'"));
  }
  SUBCASE("the node at an address is another one: said at once, not after the timeout") {
    auto secret = riomesh::config::secret_file_named_in(cluster + "broker.yaml");
    std::string out;
    auto started = std::chrono::steady_clock::now();
    CHECK(run({cli(), "ping", "node-x", "--at", "127.0.0.1:7481", "--secret-file", secret,
               "--count", "1"},
              out) == 1);
    // The broker refused the session under its own kind: the CLI's wait
    // for node-x (5 s) ends with it.
    CHECK(std::chrono::steady_clock::now() - started < 3s);
    CHECK(has(out, "this is node 'broker', not node 'node-x' as the dialer expected"));
  }
  SUBCASE("the example cluster runs authenticated: a process without its secret is refused") {
    CHECK(broker_log.find("accepts unauthenticated peers") == std::string::npos);
    for (const auto* file : {"broker.yaml", "publisher.yaml", "sub-1.yaml", "sub-2.yaml"})
      CHECK_MESSAGE(!riomesh::config::load_file(cluster + file).cluster.secret.empty(), file);
    // A client without it, claiming a name of the cluster's own.
    std::string out;
    CHECK(run({cli(), "ping", "broker", "--at", "127.0.0.1:7481", "--count", "1"}, out) == 1);
    CHECK(has(out, "did not prove the cluster secret"));
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

TEST_CASE("pubsub-cluster: a signal to the launcher alone stops its nodes and cleans up") {
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    node_process launcher("launcher", {bin + "/examples/pubsub/pubsub-cluster", "--set",
                                       "pub-1.rate=200,pub-1.messages=100000,pub-1.size=4KiB",
                                       cluster + "broker.yaml", cluster + "publisher.yaml",
                                       cluster + "sub-1.yaml", cluster + "sub-2.yaml"});
    launcher.start();
    std::string seen;
    REQUIRE_MESSAGE(wait_for(launcher, "run folder ", seen), seen);
    auto at = seen.find("run folder ") + 11;
    auto folder = seen.substr(at, seen.find_first_of(",\n", at) - at);
    REQUIRE_MESSAGE(wait_for(launcher, " acked", seen), seen);
    // Its nodes: the processes whose parent it is.
    std::vector<int> nodes;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::ifstream stat(entry.path() / "stat");
      std::string pid, comm, state;
      int ppid = 0;
      if (stat >> pid >> comm >> state >> ppid && ppid == launcher.pid())
        nodes.push_back(std::stoi(pid));
    }
    REQUIRE(nodes.size() == 4);
    CHECK(stop(launcher, sig, seen) == 128 + sig);
    CHECK_MESSAGE(
        has(seen, std::string{"interrupted by "} + (sig == SIGINT ? "SIGINT" : "SIGTERM")), seen);
    CHECK_MESSAGE(has(seen, "(so far: no final report)"), seen);  // the table, as far as it got
    for (int pid : nodes)
      CHECK_MESSAGE(::kill(pid, 0) != 0, "node process " << pid << " outlived its launcher");
    CHECK_MESSAGE(!std::filesystem::exists(folder), folder << " was left behind");
  }
}

TEST_CASE("riomesh: arguments are checked before any network activity, usage errors exit 2") {
  struct bad {
    std::vector<std::string> args;
    std::string says;
  };
  // 127.0.0.1:1: nobody listens; a check made only after dialing would be
  // a "does not answer" (exit 1) after seconds, not a usage error.
  std::vector<bad> cases = {
      {{"ping", "x", "--at", "127.0.0.1:1", "--count", "abc"},
       "--count abc: expected a whole number from 1 to 1000000"},
      {{"ping", "x", "--at", "127.0.0.1:1", "--count", "-3"}, "--count -3: expected a whole"},
      {{"ping", "x", "--at", "127.0.0.1:1", "--count", "0"}, "--count 0: out of range"},
      {{"ping", "x", "--at", "127.0.0.1:1", "--interval", "0"},
       "--interval 0: must be longer than 0"},
      {{"stat", "x", "--at", "127.0.0.1:1", "--interval", "-1s"},
       "--interval -1s: a negative duration"},
      {{"stat", "x", "--at", "127.0.0.1:1", "--count", "2"}, "--count goes with --watch"},
      {{"ping", "x", "--at", "127.0.0.1:1", "--fabric", "rdma"},
       "--fabric: node.fabric: 'rdma' is not one of auto, verbs, tcp"},
      {{"ping", "x", "--at", "127.0.0.1:1", "--log-level", "loud"}, "--log-level: logging.level"},
      {{"ping", "x", "--at", "nowhere"}, "--at nowhere: "},
      {{"ping", "x", "--at", "127.0.0.1:1", "--secret-file", "/nonexistent/secret"},
       "--secret-file /nonexistent/secret: cannot read it: No such file or directory"},
      {{"ping", "x"}, "say where NODE is"},
      {{"ping"}, "name one node"},
      {{"ls", "x", "--bogus"}, "unknown option '--bogus'"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv{cli()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    std::string out;
    auto start = std::chrono::steady_clock::now();
    CHECK_MESSAGE(run(argv, out) == 2, out);
    CHECK_MESSAGE(has(out, c.says), out);
    CHECK(std::chrono::steady_clock::now() - start < 2s);
  }
}

TEST_CASE("every program and subcommand has --help and --version") {
  std::vector<std::vector<std::string>> programs = {{cli()},
                                                    {cli(), "config"},
                                                    {cli(), "keygen"},
                                                    {cli(), "ping"},
                                                    {cli(), "stat"},
                                                    {cli(), "ls"},
                                                    {cli(), "devices"},
                                                    {node()},
                                                    {bin + "/examples/pubsub/pubsub-cluster"}};
  for (const auto& p : programs) {
    for (const char* flag : {"--help", "--version"}) {
      auto argv = p;
      argv.push_back(flag);
      std::string out;
      CAPTURE(argv.size() > 1 ? argv[1] : argv[0]);
      CAPTURE(flag);
      CHECK(run(argv, out) == 0);
      CHECK_MESSAGE(has(out, std::string{flag} == "--help" ? "usage: " : "riomesh 0."), out);
    }
  }
}

TEST_CASE("riomesh config check and riomesh-node --check agree, word for word") {
  auto path = "/tmp/riomesh-check-" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "node:\n  name: n\n  listen: 127.0.0.1:0\n"
                         "channel:\n  keepalive: -1s\n"
                         "actors:\n"
                         "  - {type: pubsub.publisher, name: p, params: {size: huge}}\n"
                         "  - {type: pubsub.subscribr, name: s, params: {broker: b}}\n";
  std::string by_cli, by_node;
  CHECK(run({cli(), "config", "check", path}, by_cli) == 1);
  CHECK(run({node(), "--config", path, "--check"}, by_node) == 1);
  CHECK(by_cli == by_node);
  CHECK_MESSAGE(has(by_cli, path + ":5:14: channel.keepalive: -1s is negative"), by_cli);
  CHECK(has(by_cli, "unknown type 'pubsub.subscribr'; did you mean 'pubsub.subscriber'?"));
  CHECK(has(by_cli, "params.size: 'huge' is not a size"));
  CHECK(has(by_cli, path + ": 4 problems; the node would not start"));
  // In line order: the channel's line 5 before the actors' lines 7 and 8.
  CHECK(by_cli.find("keepalive") < by_cli.find("'huge'"));
  CHECK(by_cli.find("'huge'") < by_cli.find("subscribr"));
  ::unlink(path.c_str());
}
