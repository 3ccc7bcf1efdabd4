// Actor handles inside messages, across nodes: a handle arrives as a proxy
// of the actor it names (or the local actor itself, back home), whatever
// node it is on, and is never taken for an actor of the node that reads
// it; monitors and links work through it; a node dialed at run time is a
// peer like a configured one.
#include "handle_actors.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/system_messages.hpp>

#include <doctest/doctest.h>

#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

TEST_CASE_FIXTURE(two_nodes,
                  "handles: a reply-to handle in a message reaches its actor, both ways") {
  auto fb = b->system().spawn<forwarder>();
  b->publish(fb, "forwarder");
  auto fa = a->system().spawn<forwarder>();
  a->publish(fa, "forwarder");
  auto at_b = a->remote_actor("node-b", "forwarder");
  REQUIRE_MESSAGE(at_b, error_text(*a, at_b));
  auto at_a = once_connected([&] { return b->remote_actor("node-a", "forwarder"); });
  REQUIRE_MESSAGE(at_a, error_text(*b, at_a));
  auto ca = a->system().spawn<collector>(), cb = b->system().spawn<collector>();
  caf::anon_send(*at_b, to_whom{"from a, through b, to a", ca});
  caf::anon_send(*at_a, to_whom{"from b, through a, to b", cb});
  CHECK(hears(*a, ca, "from a, through b, to a"));
  CHECK(hears(*b, cb, "from b, through a, to b"));
  // As an address, a weak and a strong pointer too; and a typed handle, asked.
  caf::anon_send(*at_b, to_address{"a's collector", caf::actor_cast<caf::actor_addr>(ca),
                                   caf::actor_cast<caf::weak_actor_ptr>(ca),
                                   caf::actor_cast<caf::strong_actor_ptr>(ca)});
  CHECK(hears(*a, ca, "a's collector (by address)"));
  CHECK(hears(*a, ca, "a's collector (by weak pointer)"));
  CHECK(hears(*a, ca, "a's collector (by strong pointer)"));
  auto calc = spawn_calc(a->system());
  caf::scoped_actor self{a->system()};
  self->request(*at_b, 10s, to_calc{calc})
      .receive([](int sum) { CHECK(sum == 42); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  caf::anon_send_exit(ca, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(cb, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(calc, caf::exit_reason::user_shutdown);
  // In CAF 0.17 a request's timeout keeps its requester alive until it
  // fires, answered or not: the forwarder that asked calc would hold the
  // node's shutdown for its 10 s. Killed (it traps exits), it goes at once.
  caf::anon_send_exit(fa, caf::exit_reason::kill);
  caf::anon_send_exit(fb, caf::exit_reason::kill);
}

TEST_CASE_FIXTURE(two_nodes,
                  "handles: an actor id of another node is never taken for a local one") {
  // Actor ids count up on each node from the same start: spawn on the one
  // behind until a's collector and b's share theirs.
  auto ca = a->system().spawn<collector>(), cb = b->system().spawn<collector>();
  for (int i = 0; i < 1000 && ca.id() != cb.id(); ++i) {
    if (ca.id() < cb.id())
      ca = a->system().spawn<collector>();
    else
      cb = b->system().spawn<collector>();
  }
  REQUIRE(ca.id() == cb.id());
  auto fa = a->system().spawn<forwarder>();
  a->publish(fa, "forwarder");
  b->publish(spawn_sink(b->system()), "sink");
  REQUIRE(a->remote_actor("node-b", "sink"));
  // b learns of a when its side of the connection is up, a moment after
  // a's (a loaded machine showed it).
  auto at_a = once_connected([&] { return b->remote_actor("node-a", "forwarder"); });
  REQUIRE_MESSAGE(at_a, error_text(*b, at_a));
  // b hands a a handle to b's collector: a must send there, not to its own.
  caf::anon_send(*at_a, to_whom{"meant for node-b", cb});
  CHECK(hears(*b, cb, "meant for node-b"));
  CHECK(lines_of(*a, ca).empty());
  caf::anon_send_exit(ca, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(cb, caf::exit_reason::user_shutdown);
}

TEST_CASE("handles: a handle of a third node's actor reaches it, dialed where the sender says") {
  auto c = start_node(node_settings("node-c"));
  auto b = start_node(node_settings("node-b"));  // knows neither a nor c
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}, {"node-c", c->port()}}));
  auto cc = c->system().spawn<collector>();
  c->publish(cc, "collector");
  auto fb = b->system().spawn<forwarder>();
  b->publish(fb, "forwarder");
  auto c_at_a = a->remote_actor("node-c", "collector");
  REQUIRE_MESSAGE(c_at_a, error_text(*a, c_at_a));
  auto at_b = a->remote_actor("node-b", "forwarder");
  REQUIRE(at_b);
  caf::anon_send(*at_b, to_whom{"from b, a handle a gave it", *c_at_a});
  CHECK(hears(*c, cc, "from b, a handle a gave it"));
  CHECK(b->stats().peers.size() == 2);  // a, and c, dialed
}

TEST_CASE_FIXTURE(two_nodes, "handles: a monitor and a link through a received handle") {
  auto fb = b->system().spawn<forwarder>();
  b->publish(fb, "forwarder");
  auto at_b = a->remote_actor("node-b", "forwarder");
  REQUIRE(at_b);
  // b monitors an actor of a it was told of: its exit reaches b's monitor.
  auto doomed = a->system().spawn<collector>();
  caf::anon_send(*at_b, watch_atom::value, doomed);
  std::this_thread::sleep_for(200ms);
  caf::anon_send_exit(doomed, caf::exit_reason::user_shutdown);
  CHECK(hears(*b, fb, "down: "));
  // b links to one: its exit reaches b's actor as an exit message (which
  // b's forwarder traps), and b's exit reaches a's.
  auto partner = a->system().spawn<collector>();  // does not trap exits: it ends
  caf::anon_send(*at_b, tie_atom::value, partner);
  std::this_thread::sleep_for(200ms);
  caf::anon_send_exit(partner, caf::exit_reason::user_shutdown);
  CHECK(hears(*b, fb, "exit: "));
  auto other = a->system().spawn<forwarder>();
  caf::anon_send(*at_b, tie_atom::value, other);
  std::this_thread::sleep_for(200ms);
  caf::anon_send_exit(fb, caf::exit_reason::kill);
  CHECK(hears(*a, other, "exit: "));
  caf::anon_send_exit(other, caf::exit_reason::kill);
}

TEST_CASE("handles: a node dialed at run time, by address, is a peer like a configured one") {
  auto b = start_node(node_settings("node-b"));
  auto a = start_node(node_settings("node-a"));  // b is not in its file
  b->publish(spawn_sink(b->system()), "sink");
  config::endpoint where{node_settings("x").node.listen.host, b->port()};
  auto name = a->connect(where);
  REQUIRE_MESSAGE(name, error_text(*a, name));
  CHECK(*name == "node-b");
  auto s = a->remote_actor(where, "sink");
  REQUIRE_MESSAGE(s, error_text(*a, s));
  // As the README writes it: a host string and a port in braces.
  std::string host = where.host;
  std::uint16_t port = where.port;
  auto braced = a->remote_actor<caf::actor>({host, port}, "sink");
  REQUIRE_MESSAGE(braced, error_text(*a, braced));
  CHECK(*braced == *s);
  auto data = a->allocate(1 << 20);
  fill(data, 5);
  CHECK(sum_at(*a, *s, data) == checksum(data));
  // From inside an actor, without blocking: ask the admin actor.
  caf::scoped_actor self{a->system()};
  self->request(a->admin(), 10s, dial_atom::value, where.host, where.port)
      .receive([](const std::string& n) { CHECK(n == "node-b"); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  // An event-based actor dials, resolves and asks, none of it blocking.
  auto asker = spawn_fn(
      a->system(),
      [admin = a->admin(), where, data](caf::event_based_actor* self) -> caf::behavior {
        return {[=](count_atom) -> caf::result<std::uint64_t> {
          auto rp = self->make_response_promise<std::uint64_t>();
          auto fail = [=](caf::error& e) mutable { rp.deliver(std::move(e)); };
          self->request(admin, 10s, dial_atom::value, where.host, where.port)
              .then(
                  [=](const std::string& node) mutable {
                    self->request(admin, 10s, resolve_atom::value, node, std::string("sink"),
                                  std::chrono::milliseconds(5000))
                        .then(
                            [=](caf::strong_actor_ptr& sink, std::string&) mutable {
                              self->request(caf::actor_cast<caf::actor>(sink), 10s, sum_atom::value,
                                            data)
                                  .then([=](std::uint64_t sum) mutable { rp.deliver(sum); }, fail);
                            },
                            fail);
                  },
                  fail);
          return rp;
        }};
      });
  self->request(asker, 30s, count_atom::value)
      .receive([&](std::uint64_t sum) { CHECK(sum == checksum(data)); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  caf::anon_send_exit(asker, caf::exit_reason::user_shutdown);
  // Nobody there: the error says where.
  auto none = a->connect({where.host, 1});
  REQUIRE_FALSE(none);
  CHECK(is(none.error(), errc::not_connected));
  CHECK(a->system().render(none.error()).find(":1") != std::string::npos);
}

TEST_CASE_FIXTURE(two_nodes, "handles: a handle a node resolved by name comes home as the actor") {
  // b's collector went to a by name (no CAF serializer on b's side): a
  // sends its handle back to b inside a message, b sends it on to a, and a
  // sends to it. Each hop must find the actor (it arrived null before).
  auto fb = b->system().spawn<forwarder>();
  b->publish(fb, "forwarder");
  auto cb = b->system().spawn<collector>();
  b->publish(cb, "collector");
  auto at_b = a->remote_actor("node-b", "forwarder");
  REQUIRE(at_b);
  auto cb_at_a = a->remote_actor("node-b", "collector");
  REQUIRE(cb_at_a);
  auto fa = a->system().spawn<forwarder>();
  caf::anon_send(*at_b, fa, to_whom{"b -> a -> b", *cb_at_a});
  CHECK(hears(*b, cb, "b -> a -> b"));
  // A handle that went out in a message stays in CAF's registry until its
  // actor exits (CAF waits for it when the runtime ends).
  caf::anon_send_exit(fa, caf::exit_reason::user_shutdown);
}
