// Structured logs from real nodes: with logging.format: json every line a
// node writes is one JSON object, and what concerns a peer names it in a
// field of its own, so that a collector finds a peer's whole story with a
// filter instead of a pattern over sentences.
#include <node_process.hpp>
#include <process_lines.hpp>
#include <temp_folder.hpp>

#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

using pubsub::launch::node_process;
using riomesh::test::joined;
using riomesh::test::wait_line;
using namespace std::chrono_literals;

namespace {

const std::string bin = RIOMESH_BINARY_DIR;

}  // namespace

TEST_CASE("logs: a node's json lines name the peer and the event in fields of their own") {
  riomesh::test::temp_folder dir{"riomesh-json-logs"};
  auto node_yaml = [&](const std::string& name, const std::string& peers) {
    auto file = dir.path / (name + ".yaml");
    std::ofstream(file) << "node:\n  name: " << name
                        << "\n  listen: 127.0.0.1:0\n  fabric: tcp\ncluster:\n  peers: " << peers
                        << "\nchannel:\n  arena: 8MiB\nlogging:\n  format: json\n";
    return file.string();
  };
  node_process a("node-a", {bin + "/tools/riomesh-node", "--config", node_yaml("node-a", "[]")});
  a.start();
  std::vector<std::string> a_log, b_log;
  auto port = wait_line(
      a, std::regex{R"re("event":"listening","fields":\{"address":"127\.0\.0\.1:(\d+)")re"}, a_log);
  REQUIRE_MESSAGE(!port.empty(), "node-a did not say where it listens:\n" << joined(a_log));
  node_process b("node-b",
                 {bin + "/tools/riomesh-node", "--config",
                  node_yaml("node-b", "[{name: node-a, address: '127.0.0.1:" + port + "'}]")});
  b.start();
  CHECK_FALSE(
      wait_line(a, std::regex{R"re("event":"peer_connected","peer":"node-b")re"}, a_log).empty());
  CHECK_FALSE(
      wait_line(b, std::regex{R"re("event":"peer_connected","peer":"node-a")re"}, b_log).empty());
  b.signal(SIGTERM);
  // Left, not lost: it said goodbye. The reason is a field too.
  CHECK_FALSE(
      wait_line(a, std::regex{R"re("event":"peer_left","peer":"node-b","fields":\{"reason":")re"},
                a_log)
          .empty());
  CHECK_FALSE(wait_line(b, std::regex{R"re("event":"stopped")re"}, b_log).empty());
  a.signal(SIGTERM);
  CHECK_FALSE(wait_line(a, std::regex{R"re("event":"stopped")re"}, a_log).empty());
  // Every line of both, start to end, is one object of the documented shape.
  std::regex shape{
      R"re(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","level":"(debug|info|warn)",)re"
      R"re("node":"node-[ab]","event":"[a-z_]+"(,"peer":"[^"]+")?(,"fields":\{.*\})?,)re"
      R"re("message":".*"\})re"};
  for (const auto* log : {&a_log, &b_log})
    for (const auto& line : *log)
      CHECK_MESSAGE(std::regex_match(line, shape), line);
  for (auto* p : {&a, &b}) {
    auto until = std::chrono::steady_clock::now() + 20s;
    while (!p->reap() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(10ms);
    CHECK(p->how_ended() == "exit 0");
  }
}
