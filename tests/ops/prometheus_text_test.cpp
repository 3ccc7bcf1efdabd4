// The exposition text /metrics serves: every family named, typed and
// explained once, counters as _total, peers as labels, peer names escaped.
#include "metrics/prometheus_text.hpp"

#include <riomesh/actors/requests/latency_recorder.hpp>
#include "metrics/counter_catalog.hpp"

#include <riomesh/config/loader.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <sstream>

using namespace riomesh;
using detail::metrics_snapshot;
using detail::prometheus_text;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

metrics_snapshot sample() {
  metrics_snapshot s;
  s.facts = {{"node", "broker"}, {"listen", "127.0.0.1:7481"}, {"fabric", "tcp"}};
  s.uptime_ms = 61042;
  s.stats.node.messages_out = 7;
  s.stats.node.proxies = 3;
  connection_counters c;
  c.messages_in = 5;
  c.queue_depth = 2;
  s.stats.peers.push_back({"pub-node", c});
  s.stats.peers.push_back({"evil\"\\\nname", c});
  s.stats.connections.push_back({1, "pub-node", "", "up", true});
  s.stats.connections.push_back({2, "", "", "setting up", false});
  s.configured_peers = {"pub-node", "gone"};
  s.stats.request_latency.bounds = {0.0001, 0.001};
  s.stats.request_latency.counts = {3, 5};
  s.stats.request_latency.count = 6;
  s.stats.request_latency.sum = 1.25;
  return s;
}

}  // namespace

TEST_CASE("metrics text: each family has one HELP and one TYPE, before its samples") {
  auto lines = lines_of(prometheus_text(sample()));
  std::set<std::string> helped, typed;
  for (const auto& l : lines) {
    if (l.rfind("# HELP ", 0) == 0) {
      auto name = l.substr(7, l.find(' ', 7) - 7);
      CHECK_MESSAGE(helped.insert(name).second, "HELP twice for " << name);
    } else if (l.rfind("# TYPE ", 0) == 0) {
      auto name = l.substr(7, l.find(' ', 7) - 7);
      auto type = l.substr(l.rfind(' ') + 1);
      CHECK_MESSAGE(typed.insert(name).second, "TYPE twice for " << name);
      CHECK(((type == "counter") ==
             (name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0)));
    } else {
      auto name = l.substr(0, l.find_first_of("{ "));
      // A histogram's samples carry its family's name and a suffix.
      for (const char* suffix : {"_bucket", "_sum", "_count"})
        if (!typed.count(name) && name.size() > std::strlen(suffix) &&
            name.compare(name.size() - std::strlen(suffix), std::strlen(suffix), suffix) == 0)
          name.resize(name.size() - std::strlen(suffix));
      CHECK_MESSAGE(typed.count(name) == 1, "a sample before its TYPE: " << l);
    }
  }
  CHECK(helped == typed);
  // Every counter `riomesh stat` shows is a series.
  CHECK(typed.size() == 5 + detail::node_metrics().size() + detail::memory_metrics().size() +
                            detail::connection_metrics().size());
}

TEST_CASE("metrics text: values, labels and escaped peer names") {
  auto text = prometheus_text(sample());
  CHECK(text.find("\nriomesh_node_messages_out_total 7\n") != std::string::npos);
  CHECK(text.find("\nriomesh_node_proxies 3\n") != std::string::npos);
  CHECK(text.find("\nriomesh_node_uptime_seconds 61.042\n") != std::string::npos);
  CHECK(text.find(
            "riomesh_node_info{node=\"broker\",listen=\"127.0.0.1:7481\",fabric=\"tcp\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("\nriomesh_peer_messages_in_total{peer=\"pub-node\"} 5\n") != std::string::npos);
  CHECK(text.find("\nriomesh_peer_queue_depth{peer=\"pub-node\"} 2\n") != std::string::npos);
  // A peer's name is the peer's to choose: it stays inside its quotes.
  CHECK(text.find("\nriomesh_peer_messages_in_total{peer=\"evil\\\"\\\\\\nname\"} 5\n") !=
        std::string::npos);
  CHECK(text.find("\nriomesh_connections{phase=\"up\"} 1\n") != std::string::npos);
  CHECK(text.find("\nriomesh_connections{phase=\"setting up\"} 1\n") != std::string::npos);
  CHECK(text.find("\nriomesh_connections{phase=\"draining\"} 0\n") != std::string::npos);
  CHECK(text.find("\nriomesh_peer_up{peer=\"pub-node\"} 1\n") != std::string::npos);
  CHECK(text.find("\nriomesh_peer_up{peer=\"gone\"} 0\n") != std::string::npos);
  // Requests' round trips: cumulative buckets, +Inf holding them all.
  CHECK(text.find("# TYPE riomesh_request_duration_seconds histogram\n"
                  "riomesh_request_duration_seconds_bucket{le=\"0.0001\"} 3\n"
                  "riomesh_request_duration_seconds_bucket{le=\"0.001\"} 5\n"
                  "riomesh_request_duration_seconds_bucket{le=\"+Inf\"} 6\n"
                  "riomesh_request_duration_seconds_sum 1.25\n"
                  "riomesh_request_duration_seconds_count 6\n") != std::string::npos);
}

TEST_CASE("request latency: each round trip in its bucket, cumulative, with its sum") {
  actors::latency_recorder r;
  using namespace std::chrono;
  r.record(microseconds(7));   // <= 10 us
  r.record(microseconds(10));  // <= 10 us: a bound is inclusive
  r.record(microseconds(11));  // <= 25 us
  r.record(milliseconds(3));   // <= 5 ms
  r.record(seconds(30));       // beyond 10 s: +Inf only
  auto h = r.snapshot();
  REQUIRE(h.bounds.size() == actors::latency_recorder::bounds_us.size());
  CHECK(h.bounds.front() == doctest::Approx(0.00001));
  CHECK(h.counts[0] == 2);
  CHECK(h.counts[1] == 3);
  CHECK(h.counts[7] == 3);  // 2.5 ms
  CHECK(h.counts[8] == 4);  // 5 ms
  CHECK(h.counts.back() == 4);
  CHECK(h.count == 5);
  CHECK(h.sum == doctest::Approx(30.003028));
}

TEST_CASE("metrics text: label values escape backslash, quote and line feed only") {
  CHECK(detail::label_value("a\\b\"c\nd\te") == "a\\\\b\\\"c\\nd\te");
  CHECK(detail::label_value("sub-node-1") == "sub-node-1");
}

TEST_CASE("node.metrics: an address, off by default, or a clear error") {
  auto base = std::string{"node:\n  name: n1\n  listen: 127.0.0.1:7471\n"};
  CHECK(config::load_string(base, "node.yaml", ".").node.metrics.host.empty());
  auto on = config::load_string(base + "  metrics: 127.0.0.1:9464\n", "node.yaml", ".");
  CHECK(on.node.metrics.host == "127.0.0.1");
  CHECK(on.node.metrics.port == 9464);
  CHECK(config::load_string(base + "  metrics: off\n", "node.yaml", ".").node.metrics.host.empty());
  try {
    config::load_string(base + "  metrics: 9464\n", "node.yaml", ".");
    FAIL("a port alone was taken");
  } catch (const config::error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].to_string().rfind("node.yaml:4:12: node.metrics: malformed address "
                                            "'9464'",
                                            0) == 0);
  }
}
