// A runtime's operator endpoint over real HTTP: /healthz, /readyz naming
// the configured peers it lacks, /metrics whose counters move with the
// traffic, and a clear error for an address it cannot have.
#include <cluster.hpp>

#include <riomesh/admin.hpp>

#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

using namespace riomesh;
using namespace std::chrono_literals;

namespace {

struct reply {
  int status = 0;
  std::string body;
};

reply get(std::uint16_t port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(5);
  c.set_read_timeout(10);
  auto r = c.Get(path.c_str());
  if (!r)
    return {};
  return {r->status, r->body};
}

// The sample of `series` (name and labels, as printed) in a /metrics text.
long long value_of(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos)
    return -1;
  return std::stoll(text.substr(at + series.size() + 2));
}

// Polls `path` until its reply satisfies `ok` or 10 s pass.
template <class Predicate>
reply poll(std::uint16_t port, const std::string& path, Predicate ok) {
  auto until = std::chrono::steady_clock::now() + 10s;
  reply r;
  do {
    r = get(port, path);
    if (ok(r))
      break;
    std::this_thread::sleep_for(20ms);
  } while (std::chrono::steady_clock::now() < until);
  return r;
}

}  // namespace

TEST_CASE("metrics endpoint: health, readiness by configured peers, and counters that move") {
  auto b = test::start_node(test::node_settings("node-b", {}, "0123456789abcdef"));
  auto sa =
      test::node_settings("node-a", {{"node-b", b->port()}, {"ghost", 1}}, "0123456789abcdef");
  sa.node.metrics = {"127.0.0.1", 0};
  auto a = test::start_node(sa);
  auto port = a->metrics_port();
  REQUIRE(port != 0);
  CHECK(b->metrics_port() == 0);  // off unless asked for

  auto health = get(port, "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok\n");
  // node-b comes up; ghost (nothing listens at port 1) never does.
  auto ready = poll(port, "/readyz", [](const reply& r) {
    return r.body.find("node-b") == std::string::npos && r.status != 0;
  });
  CHECK(ready.status == 503);
  CHECK(ready.body == "not connected to configured peers (cluster.peers): ghost\n");

  auto before = get(port, "/metrics");
  REQUIRE(before.status == 200);
  CHECK(value_of(before.body, "riomesh_peer_up{peer=\"node-b\"}") == 1);
  CHECK(value_of(before.body, "riomesh_peer_up{peer=\"ghost\"}") == 0);
  auto in_before = value_of(before.body, "riomesh_node_messages_in_total");
  REQUIRE(in_before >= 0);

  // node-b pings node-a's admin actor five times: node-a's counters move.
  auto admin = b->remote_actor("node-a", admin_name);
  REQUIRE(admin);
  caf::scoped_actor self{b->system()};
  for (int i = 0; i < 5; ++i)
    self->request(*admin, 5s, ping_atom::value)
        .receive([](const std::string& name) { CHECK(name == "node-a"); },
                 [](caf::error& e) { FAIL(to_string(e)); });
  auto after = poll(port, "/metrics", [&](const reply& r) {
    return value_of(r.body, "riomesh_node_messages_in_total") >= in_before + 5;
  });
  CHECK(value_of(after.body, "riomesh_node_messages_in_total") >= in_before + 5);
  CHECK(value_of(after.body, "riomesh_peer_messages_in_total{peer=\"node-b\"}") >= 5);
  CHECK(value_of(after.body, "riomesh_connections{phase=\"up\"}") >= 1);

  // node-a's own requests to node-b are timed: three pings, three in the
  // histogram, every bucket up to +Inf counting them once they fit.
  auto b_admin = a->remote_actor("node-b", admin_name);
  REQUIRE(b_admin);
  caf::scoped_actor asker{a->system()};
  for (int i = 0; i < 3; ++i)
    asker->request(*b_admin, 5s, ping_atom::value)
        .receive([](const std::string&) {}, [](caf::error& e) { FAIL(to_string(e)); });
  auto timed = get(port, "/metrics").body;
  CHECK(value_of(timed, "riomesh_request_duration_seconds_count") >= 3);
  CHECK(value_of(timed, "riomesh_request_duration_seconds_bucket{le=\"+Inf\"}") ==
        value_of(timed, "riomesh_request_duration_seconds_count"));
  CHECK(value_of(timed, "riomesh_request_duration_seconds_bucket{le=\"10\"}") >= 3);

  // Another runtime cannot have the same address, and says which.
  CHECK_THROWS_WITH(b->serve_metrics({"127.0.0.1", port}),
                    ("node 'node-b': node.metrics: cannot listen on 127.0.0.1:" +
                     std::to_string(port) + ": Address already in use")
                        .c_str());
  // A node configured with no peers is ready as soon as it answers.
  auto b_port = b->serve_metrics({"127.0.0.1", 0});
  auto b_ready = get(b_port, "/readyz");
  CHECK(b_ready.status == 200);
  CHECK(get(b_port, "/nothing").status == 404);
}
