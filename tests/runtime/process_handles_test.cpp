// Actor handles, run-time dialing and large serialized messages between
// processes: this test process is node-a, runtime_peer children the others
// (each with its own CAF node id, and actor ids counted from its own start).
#include "handle_actors.hpp"
#include "process.hpp"

#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

namespace {

// A collector of this process with the same actor id as `theirs` (a
// collector of another process, whose ids start higher).
caf::actor twin_of(runtime& rt, const caf::actor& theirs) {
  auto mine = rt.system().spawn<collector>();
  while (mine.id() < theirs.id()) {
    caf::anon_send_exit(mine, caf::exit_reason::kill);
    mine = rt.system().spawn<collector>();
  }
  return mine;
}

}  // namespace

TEST_CASE("processes: handles cross both ways and never reach a local actor with the same id") {
  peer_process b({"node-b", "serve"});
  REQUIRE(b.started());
  auto a = start_node(node_settings("node-a", {{"node-b", b.port()}}));
  auto fb = a->remote_actor("node-b", "forwarder", 10s);
  REQUIRE_MESSAGE(fb, error_text(*a, fb));
  auto cb = a->remote_actor("node-b", "collector");
  REQUIRE_MESSAGE(cb, error_text(*a, cb));
  auto ca = twin_of(*a, *cb);
  REQUIRE(ca.id() == cb->id());  // the id of b's collector, on both nodes
  // a's handle at b, where b's collector has its id: b must send to a.
  caf::anon_send(*fb, to_whom{"a -> b -> a", ca});
  CHECK(hears(*a, ca, "a -> b -> a"));
  // b's handle at a, where a's collector has its id: b hands a's
  // forwarder its own collector, and a must send to b.
  auto fa = a->system().spawn<forwarder>();
  caf::anon_send(*fb, fa, to_whom{"b -> a -> b", *cb});
  CHECK(hears(*a, *cb, "b -> a -> b"));
  auto at_a = lines_of(*a, ca), at_b = lines_of(*a, *cb);
  CHECK(at_a == std::vector<std::string>{"a -> b -> a"});
  CHECK(at_b == std::vector<std::string>{"b -> a -> b"});
  // A typed handle of a's, asked by b.
  auto calc = spawn_calc(a->system());
  caf::scoped_actor self{a->system()};
  self->request(*fb, 10s, to_calc{calc})
      .receive([](int sum) { CHECK(sum == 42); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  for (auto& x : {ca, fa, caf::actor_cast<caf::actor>(calc)})
    caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
  CHECK(b.stop() == 0);
}

TEST_CASE("processes: a handle of a third node's actor, and a monitor through a received one") {
  peer_process b({"node-b", "serve"}), c({"node-c", "serve"});  // they know of nobody
  REQUIRE(b.started());
  REQUIRE(c.started());
  auto a = start_node(node_settings("node-a", {{"node-b", b.port()}, {"node-c", c.port()}}));
  auto fb = a->remote_actor("node-b", "forwarder", 10s);
  REQUIRE_MESSAGE(fb, error_text(*a, fb));
  auto cc = a->remote_actor("node-c", "collector", 10s);
  REQUIRE_MESSAGE(cc, error_text(*a, cc));
  // b is handed c's collector: it asks a where node-c is, dials it, sends.
  caf::anon_send(*fb, to_whom{"from b, a handle a gave it", *cc});
  CHECK(hears(*a, *cc, "from b, a handle a gave it"));
  // b monitors an actor of a's; a ends it: b's forwarder hears the down.
  auto doomed = a->system().spawn<collector>();
  caf::anon_send(*fb, watch_atom::value, doomed);
  std::this_thread::sleep_for(200ms);
  caf::anon_send_exit(doomed, caf::exit_reason::user_shutdown);
  CHECK(hears(*a, *fb, "down: "));
  CHECK(c.stop() == 0);
  CHECK(b.stop() == 0);
}

TEST_CASE("processes: a node dialed at run time, and a 64 MiB serialized message both ways") {
  // CAF's serializer takes a while over 64 MiB, on the I/O thread: more,
  // under the sanitizers on a loaded machine, than the suite's 600 ms peer
  // timeout. This case is about the message, not about losing peers.
  child_env env(child_env::vars{{"RUNTIME_PEER_TIMEOUT_MS", "5000"}});
  peer_process b({"node-b", "serve"});
  REQUIRE(b.started());
  auto sa = node_settings("node-a");  // b is not in its file
  sa.channel.peer_timeout = 5s;
  auto a = start_node(sa);
  config::endpoint where{node_settings("x").node.listen.host, b.port()};
  auto s = a->remote_actor(where, "sink", 10s);
  REQUIRE_MESSAGE(s, error_text(*a, s));
  check_mirrored(*a, *s, 64u << 20);
  CHECK(b.stop() == 0);
}
