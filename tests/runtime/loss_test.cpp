// What a node sees when a remote actor or a whole node goes away: down
// messages on monitored proxies, requests that fail instead of hanging,
// the connection coming back when the node returns; and peers that may
// not connect at all (wrong secret).
#include "cluster.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <doctest/doctest.h>

#include <future>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// Waits for the down message of `watched`.
caf::error wait_down(caf::scoped_actor& self, const caf::actor& watched, caf::duration limit) {
  caf::error reason;
  bool got = false;
  self->receive(
      [&](caf::down_msg& dm) {
        got = dm.source == watched.address();
        reason = dm.reason;
      },
      caf::after(limit) >> [] {});
  REQUIRE_MESSAGE(got, "no down message");
  return reason;
}

}  // namespace

TEST_CASE("runtime: a monitored remote actor that exits sends its down message") {
  auto b = start_node(node_settings("node-b"));
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}));
  auto victim = spawn_sink(b->system());
  b->publish(victim, "victim");
  auto v = a->remote_actor("node-b", "victim");
  REQUIRE(v);
  caf::scoped_actor self{a->system()};
  self->monitor(*v);
  // The watch goes before this request on the same connection: once it is
  // answered, node-b watches the victim, and reports why it exits (a watch
  // that came after the exit could only hear that it is gone).
  self->request(*v, 5s, count_atom::value)
      .receive([](std::uint64_t, bool) {}, [&](caf::error& e) { FAIL(a->system().render(e)); });
  b->unpublish("victim");
  caf::anon_send_exit(victim, caf::exit_reason::user_shutdown);
  victim = nullptr;
  auto why = wait_down(self, *v, caf::duration{5s});
  CHECK(is(why, errc::actor_exited));
  CHECK_MESSAGE(a->system().render(why).find("user_shutdown") != std::string::npos,
                a->system().render(why));
  // Sending to it now fails at once.
  bool failed = false;
  self->request(*v, 5s, count_atom::value)
      .receive([](std::uint64_t, bool) {}, [&](caf::error&) { failed = true; });
  CHECK(failed);
}

TEST_CASE("runtime: a lost node fails pending requests, fires monitors, and comes back") {
  auto b_settings = node_settings("node-b");
  auto b = start_node(b_settings);
  auto port = b->port();
  auto a = start_node(node_settings("node-a", {{"node-b", port}}));
  auto hole = spawn_black_hole(b->system());
  b->publish(hole, "hole");
  b->publish(spawn_sink(b->system()), "sink");
  auto h = a->remote_actor("node-b", "hole");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(h);
  REQUIRE(s);
  caf::scoped_actor waiter{a->system()}, watcher{a->system()};
  watcher->monitor(*s);
  // A buffer that arrived from node-b (a view of the arena of a's
  // connection to it: below channel.rendezvous), kept past the loss.
  auto sent = a->allocate(128 << 10);
  fill(sent, 77);
  buffer kept;
  waiter->request(*s, 10s, echo_atom::value, sent)
      .receive([&](const buffer& back) { kept = back; },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  REQUIRE(kept.where() == buffer::origin::arena);
  // A request that will never be answered, then the node goes away.
  auto answered = request_outcome(*a, *h);
  std::this_thread::sleep_for(100ms);
  caf::anon_send_exit(hole, caf::exit_reason::kill);
  hole = nullptr;
  auto t0 = clock_type::now();
  b.reset();
  auto why = wait_down(watcher, *s, caf::duration{5s});
  auto took = clock_type::now() - t0;
  CHECK(is(why, errc::node_lost));
  CHECK(took < a->settings().channel.peer_timeout + 1s);
  REQUIRE(answered.wait_for(5s) == std::future_status::ready);
  auto request_error = answered.get();
  CHECK(is(request_error, errc::node_lost));
  // The connection is gone; the view still reads what arrived.
  CHECK(checksum(kept) == checksum(sent));
  kept = buffer{};

  // The node returns on its port: a redials, and names resolve again.
  b_settings.node.listen.port = port;
  b = start_node(b_settings);
  b->publish(spawn_sink(b->system()), "sink");
  auto again = a->remote_actor("node-b", "sink", 10s);
  REQUIRE_MESSAGE(again, error_text(*a, again));
  auto data = a->allocate(1 << 20);
  fill(data, 2);
  std::uint64_t sum = 0;
  waiter->request(*again, 10s, sum_atom::value, data)
      .receive([&](std::uint64_t x) { sum = x; },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  CHECK(sum == checksum(data));
}

TEST_CASE("runtime: a wrong secret is refused, and the reason says so") {
  auto b = start_node(node_settings("node-b"));
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}, "not-the-cluster-secret"));
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink", 1500ms);
  REQUIRE_FALSE(s);
  CHECK(is(s.error(), errc::not_connected));
  auto text = a->system().render(s.error());
  CAPTURE(text);
  CHECK(text.find("secret") != std::string::npos);
}

TEST_CASE("runtime: no secret on a non-loopback address is refused at start") {
  if (fabric_under_test() == "rdma")
    return;  // the VM's device address is the only one rdma can use
  auto s = node_settings("open");
  s.cluster.secret.clear();
  s.node.listen.host = "0.0.0.0";
  try {
    start_node(s);
    FAIL("started without a secret on 0.0.0.0");
  } catch (const std::runtime_error& e) {
    CHECK(std::string{e.what()}.find("secret") != std::string::npos);
  }
  s.cluster.insecure = true;  // unless the config says so
  CHECK_NOTHROW(start_node(s));
}

TEST_CASE("runtime: stopping sends what is queued first") {
  auto b = start_node(node_settings("node-b"));
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}));
  auto sink_at_b = spawn_sink(b->system());
  b->publish(sink_at_b, "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  constexpr std::uint64_t n = 300;
  {
    caf::scoped_actor self{a->system()};
    for (std::uint64_t i = 0; i < n; ++i) {
      auto data = a->allocate(i % 2 ? 200 << 10 : 100);
      fill(data, i);
      self->send(*s, blob{i, data});
    }
  }
  a.reset();  // at once: the sends are still on their way
  // a has stopped: all of it left a; b may still be reading the last.
  caf::scoped_actor self{b->system()};
  std::uint64_t count = 0;
  bool intact = false;
  for (int tries = 0; tries < 100 && count < n; ++tries) {
    self->request(sink_at_b, 10s, count_atom::value)
        .receive(
            [&](std::uint64_t c, bool ok) {
              count = c;
              intact = ok;
            },
            [&](caf::error& e) { FAIL(b->system().render(e)); });
    if (count < n)
      std::this_thread::sleep_for(50ms);
  }
  CHECK(count == n);
  CHECK(intact);
}

TEST_CASE("runtime: a peer that stops is let go at once, and the reason says it stopped") {
  auto b = start_node(node_settings("node-b"));
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}));
  b->publish(spawn_sink(b->system()), "sink");
  REQUIRE(a->remote_actor("node-b", "sink"));
  a.reset();
  // b must close its side when a's shutdown arrives, not hold a half-open
  // connection (whose end of stream kept waking b's progress loop) until a
  // keepalive hits the closed socket.
  std::string why;
  for (int tries = 0; tries < 40 && why.find("stopped") == std::string::npos; ++tries) {
    auto r = b->remote_actor("node-a", "sink", 100ms);
    REQUIRE_FALSE(r);
    why = b->system().render(r.error());
  }
  INFO(why);
  CHECK(why.find("it stopped") != std::string::npos);
}
