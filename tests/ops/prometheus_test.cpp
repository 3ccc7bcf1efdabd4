// Debian's Prometheus server scrapes a three-node pub/sub cluster (broker,
// publisher, subscriber as riomesh-node processes on loopback): every
// target is up (so the exposition text parsed), the series are there with
// their peers as labels, and the message counters grow between scrapes.
#include <node_process.hpp>
#include <process_lines.hpp>
#include <temp_folder.hpp>

#include <riomesh/config/secret_file.hpp>

#include <doctest/doctest.h>

#include <httplib.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

using pubsub::launch::node_process;
using riomesh::test::joined;
using riomesh::test::wait_line;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string bin = RIOMESH_BINARY_DIR;

struct started_node {
  std::unique_ptr<node_process> process;
  std::string listen_port, metrics;  // metrics: "127.0.0.1:PORT"
  std::vector<std::string> log;
};

started_node start(const fs::path& dir, const std::string& name, const std::string& yaml) {
  auto file = dir / (name + ".yaml");
  std::ofstream(file) << yaml;
  started_node n;
  n.process = std::make_unique<node_process>(
      name, std::vector<std::string>{bin + "/tools/riomesh-node", "--config", file.string()});
  n.process->start();
  n.listen_port = wait_line(*n.process, std::regex{"listening on 127\\.0\\.0\\.1:(\\d+)"}, n.log);
  n.metrics = wait_line(*n.process, std::regex{"metrics at http://([0-9.:]+)/metrics"}, n.log);
  REQUIRE_MESSAGE(!n.metrics.empty(), name << " did not serve metrics:\n" << joined(n.log));
  return n;
}

std::string node_file(const std::string& name, const std::string& peers, const std::string& actor) {
  return "node:\n  name: " + name +
         "\n  listen: 127.0.0.1:0\n  fabric: tcp\n  metrics: 127.0.0.1:0\n"
         "cluster:\n  secret_file: cluster.secret\n  peers: " +
         peers + "\nchannel:\n  arena: 8MiB\nactors:\n" + actor;
}

// A port free now, for Prometheus (which cannot say which port 0 gave it).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Prometheus's answer to an instant query, as JSON text.
std::string query(int port, const std::string& promql) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10);
  auto r = c.Get("/api/v1/query", {{"query", promql}}, httplib::Headers{});
  return r && r->status == 200 ? r->body : std::string{};
}

// The values of a query's result vector, in order ("value":[t,"v"]).
std::vector<double> values(const std::string& json) {
  std::vector<double> out;
  static const std::regex value{"\"value\":\\[[0-9.]+,\"([-0-9.e+]+)\"\\]"};
  for (std::sregex_iterator it(json.begin(), json.end(), value), end; it != end; ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

}  // namespace

TEST_CASE("prometheus: the real server scrapes a three-node cluster and its series move") {
  const char* prometheus = "/usr/bin/prometheus";
  REQUIRE_MESSAGE(fs::exists(prometheus), "Debian's prometheus is missing: run tools/deps.sh");
  riomesh::test::temp_folder dir{"riomesh-prometheus"};
  std::string error;
  REQUIRE_MESSAGE(riomesh::config::make_secret_file((dir.path / "cluster.secret").string(), error),
                  error);
  auto broker = start(dir.path, "broker",
                      node_file("broker", "[]", "  - {type: pubsub.broker, name: broker}\n"));
  auto at_broker = "[{name: broker, address: '127.0.0.1:" + broker.listen_port + "'}]";
  auto sub = start(dir.path, "sub-node",
                   node_file("sub-node", at_broker,
                             "  - type: pubsub.subscriber\n    name: sub-1\n    params: "
                             "{broker: broker, topic: ticks, publishers: 1}\n"));
  // Slow and long: samples flow through every scrape of the test.
  auto pub = start(dir.path, "pub-node",
                   node_file("pub-node", at_broker,
                             "  - type: pubsub.publisher\n    name: pub-1\n    params: "
                             "{broker: broker, broker_actor: broker, topic: ticks, messages: "
                             "100000, size: 4KiB, rate: 100, wait_for_subscribers: 1}\n"));

  std::ofstream(dir.path / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
         "scrape_configs:\n  - job_name: riomesh\n    static_configs:\n"
         "      - targets: ['"
      << broker.metrics << "', '" << pub.metrics << "', '" << sub.metrics << "']\n";
  // A port free a moment ago may be taken by the time Prometheus binds it:
  // then it exits, and gets another.
  int port = 0;
  std::unique_ptr<node_process> server;
  std::vector<std::string> server_log;
  for (int attempt = 0; attempt < 3 && !port; ++attempt) {
    int p = free_port();
    server = std::make_unique<node_process>(
        "prometheus", std::vector<std::string>{
                          prometheus, "--config.file=" + (dir.path / "prometheus.yml").string(),
                          "--storage.tsdb.path=" + (dir.path / "data").string(),
                          "--web.listen-address=127.0.0.1:" + std::to_string(p)});
    server->start();
    std::regex ready{"(Server is ready to receive web requests|Error starting web server)"};
    if (wait_line(*server, ready, server_log) == "Server is ready to receive web requests")
      port = p;
    else
      server->signal(SIGKILL);
  }
  REQUIRE_MESSAGE(port != 0, "prometheus did not start:\n" << joined(server_log));

  // Every target up: Prometheus parsed what each node served.
  auto until = std::chrono::steady_clock::now() + 30s;
  std::vector<double> up;
  while (std::chrono::steady_clock::now() < until) {
    up = values(query(port, "up{job=\"riomesh\"}"));
    if (up.size() == 3 && up[0] == 1 && up[1] == 1 && up[2] == 1)
      break;
    std::this_thread::sleep_for(250ms);
  }
  CHECK(up == std::vector<double>{1, 1, 1});

  // The broker's figures per peer, and the publisher's messages growing.
  auto series = [&](const std::string& promql) {
    auto u = std::chrono::steady_clock::now() + 20s;
    std::vector<double> v;
    while (std::chrono::steady_clock::now() < u) {
      v = values(query(port, promql));
      if (!v.empty())
        break;
      std::this_thread::sleep_for(250ms);
    }
    return v;
  };
  auto from_pub = series("riomesh_peer_messages_in_total{peer=\"pub-node\"}");
  REQUIRE(from_pub.size() == 1);
  CHECK(series("riomesh_peer_up{peer=\"broker\"}") == std::vector<double>{1, 1});
  CHECK(series("riomesh_node_info{node=\"sub-node\",fabric=\"tcp\"}") == std::vector<double>{1});
  auto sent = series("riomesh_node_messages_out_total{instance=\"" + pub.metrics + "\"}");
  REQUIRE(sent.size() == 1);
  std::vector<double> later;
  auto u = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < u) {
    later = series("riomesh_node_messages_out_total{instance=\"" + pub.metrics + "\"}");
    if (!later.empty() && later[0] > sent[0])
      break;
    std::this_thread::sleep_for(500ms);
  }
  REQUIRE(later.size() == 1);
  CHECK(later[0] > sent[0]);
  CHECK(series("rate(riomesh_peer_messages_in_total{peer=\"pub-node\"}[5s]) > 0").size() == 1);

  server->signal(SIGTERM);
  for (auto* n : {&pub, &sub, &broker})
    n->process->signal(SIGTERM);
  auto stop_by = std::chrono::steady_clock::now() + 20s;
  for (auto* p : {server.get(), pub.process.get(), sub.process.get(), broker.process.get()}) {
    while (!p->reap() && std::chrono::steady_clock::now() < stop_by)
      std::this_thread::sleep_for(10ms);
    CHECK_MESSAGE(!p->running(), p->name() << " did not stop");
  }
}
