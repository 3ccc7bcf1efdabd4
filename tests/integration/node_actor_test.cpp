// Node actors in one process over tcp on loopback: dialing configured
// peers, accepting, messages between nodes, losing a peer and getting it
// back, and a peer that is not who the config says.
#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/io/connection_host.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/node/node_actor.hpp>
#include <riomesh/errc.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <tuple>

using namespace riomesh;
using namespace riomesh::actors;
using namespace std::chrono_literals;

namespace {

struct fixture {
  io_loop loop;  // outlives the system: node actors unwatch it as they go
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<connection_host> connections;
  fixture() {
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
    connections = std::make_unique<connection_host>(*sys, loop);
  }
  // The connections end with the loop, while the system still runs them.
  ~fixture() {
    loop.stop();
    connections.reset();
    sys.reset();
  }

  node_params params(const std::string& name, std::uint16_t port,
                     std::vector<config::peer_settings> peers = {}) {
    node_params p;
    p.listen = {"127.0.0.1", port};
    p.peers = std::move(peers);
    p.channel.fabric = config::fabric_kind::tcp;
    p.connection.node_name = name;
    actors::credentials c;
    c.secret = "0123456789abcdef";
    p.connection.tls = std::make_shared<actors::tls_context>(name, c);
    p.connection.arena_size = 1 << 20;
    p.connection.releases.delay = std::chrono::microseconds(0);
    p.connection.tick = 50ms;
    p.redial.first = 50ms;
    p.redial.cap = 400ms;
    p.connections = connections.get();
    return p;
  }

  // A node with its exchange; `owner` hears its reports.
  struct node_ref {
    std::shared_ptr<exchange> x;
    caf::actor node;
  };
  node_ref spawn(const node_params& p, const caf::actor& owner) {
    std::string error;
    std::shared_ptr<channels::listener> l = channels::listen(p.listen, p.channel, error);
    REQUIRE_MESSAGE(l, error);
    node_ref n;
    exchange_params xp;
    xp.node_name = p.connection.node_name;
    n.x = exchange::make(*sys, xp);
    n.x->set_directory(caf::actor_cast<directory_events>(owner));
    n.node = caf::actor_cast<caf::actor>(spawn_node(*sys, loop, n.x, p, owner, std::move(l)));
    return n;
  }
  void stop(node_ref& n) {
    caf::anon_send_exit(n.node, caf::exit_reason::user_shutdown);
    n.x->clear();
  }

  std::uint16_t port_of(const caf::actor& node) {
    caf::scoped_actor s{*sys};
    std::uint16_t port = 0;
    s->request(node, 5s, port_atom::value)
        .receive([&](std::uint16_t p) { port = p; }, [&](caf::error& e) { FAIL(sys->render(e)); });
    return port;
  }
};

// Waits up to 10 s for (connected_atom, peer), skipping reports of failed
// dials (which come as long as the peer refuses).
bool wait_connected(caf::scoped_actor& owner, const std::string& peer) {
  auto until = std::chrono::steady_clock::now() + 10s;
  bool up = false;
  for (auto now = std::chrono::steady_clock::now(); !up && now < until;
       now = std::chrono::steady_clock::now())
    owner->receive([&](connected_atom, const std::string& name, bool) { up = name == peer; },
                   [&](closed_atom, const std::string&, const std::string&, bool) {},
                   caf::after(until - now) >> [] {});
  return up;
}

}  // namespace

TEST_CASE_FIXTURE(fixture, "nodes: a configured peer is dialed; each side routes to the other") {
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  auto b = spawn(params("node-b", 0), owner_b);
  auto port = port_of(b.node);
  auto a = spawn(params("node-a", 0, {{"node-b", {"127.0.0.1", port}}}), owner_a);
  REQUIRE(wait_connected(owner_a, "node-b"));
  REQUIRE(wait_connected(owner_b, "node-a"));
  auto ab = a.x->route_to("node-b"), ba = b.x->route_to("node-a");
  REQUIRE(ab);
  REQUIRE(ba);
  CHECK(ab->peer_name() == "node-b");
  CHECK(ab->dialed());
  CHECK_FALSE(ba->dialed());
  CHECK_FALSE(a.x->route_to("node-z"));
  stop(a);
  stop(b);
}

TEST_CASE_FIXTURE(fixture,
                  "nodes: a seed name with several addresses dials each, skips this node's own, "
                  "and keeps the nodes by name") {
  caf::scoped_actor owner_a{*sys}, owner_b{*sys}, owner_c{*sys};
  auto b = spawn(params("node-b", 0), owner_b);
  auto c = spawn(params("node-c", 0), owner_c);
  // What "seeds.test" resolves to: node-b, node-c and, once known, node-a
  // itself (a headless Service lists every pod, the asking one too).
  auto answers = std::make_shared<std::vector<config::endpoint>>();
  auto lock = std::make_shared<std::mutex>();
  *answers = {{"127.0.0.1", port_of(b.node)}, {"127.0.0.1", port_of(c.node)}};
  auto resolved = std::make_shared<std::atomic<int>>(0);
  auto p = params("node-a", 0);
  p.seeds = {{"seeds.test", 7471}};
  p.seed_interval = 100ms;
  p.resolve_seeds = [=](const config::endpoint& seed, std::string& error) {
    ++*resolved;
    if (seed.host != "seeds.test") {
      error = "unknown";
      return std::vector<config::endpoint>{};
    }
    std::lock_guard<std::mutex> guard(*lock);
    return *answers;
  };
  auto a = spawn(p, owner_a);
  {
    std::lock_guard<std::mutex> guard(*lock);
    answers->push_back({"127.0.0.1", port_of(a.node)});
  }
  bool got_b = false, got_c = false;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (!(got_b && got_c) && std::chrono::steady_clock::now() < until)
    owner_a->receive(
        [&](connected_atom, const std::string& name, bool) {
          got_b = got_b || name == "node-b";
          got_c = got_c || name == "node-c";
        },
        [&](closed_atom, const std::string&, const std::string&, bool) {}, caf::after(1s) >> [] {});
  CHECK(got_b);
  CHECK(got_c);
  // Its own address, dialed once (and refused by itself as its own name),
  // is not dialed again however often the name resolves.
  auto rounds = resolved->load();
  int refusals = 0;
  for (auto by = std::chrono::steady_clock::now() + 10s;
       resolved->load() < rounds + 5 && std::chrono::steady_clock::now() < by;)
    owner_a->receive(
        [&](closed_atom, const std::string&, const std::string& why, bool) {
          refusals += why.find("claims this node's own name") != std::string::npos;
        },
        [](connected_atom, const std::string&, bool) {}, caf::after(200ms) >> [] {});
  CHECK(resolved->load() >= rounds + 5);
  CHECK(refusals <= 1);
  CHECK(a.x->route_to("node-b"));
  CHECK(a.x->route_to("node-c"));
  CHECK_FALSE(a.x->route_to("node-a"));
  stop(a);
  stop(b);
  stop(c);
}

TEST_CASE_FIXTURE(fixture, "nodes: a seed by DNS name (localhost) is resolved and dialed") {
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  auto b = spawn(params("node-b", 0), owner_b);
  auto p = params("node-a", 0);
  p.seeds = {{"localhost", port_of(b.node)}};
  auto a = spawn(p, owner_a);
  REQUIRE(wait_connected(owner_a, "node-b"));
  CHECK(a.x->route_to("node-b"));
  stop(a);
  stop(b);
}

TEST_CASE_FIXTURE(fixture, "nodes: a lost peer is redialed and comes back") {
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  auto b = spawn(params("node-b", 0), owner_b);
  auto port = port_of(b.node);
  auto a = spawn(params("node-a", 0, {{"node-b", {"127.0.0.1", port}}}), owner_a);
  REQUIRE(wait_connected(owner_a, "node-b"));
  stop(b);
  std::string reason;
  owner_a->receive(
      [&](closed_atom, const std::string& peer, const std::string& why, bool) {
        CHECK(peer == "node-b");
        reason = why;
      },
      caf::after(10s) >> [] { FAIL("the loss went unnoticed"); });
  MESSAGE("lost: " << reason);
  // The peer restarts on the same port; the node finds it again.
  caf::scoped_actor owner_b2{*sys};
  auto b2 = spawn(params("node-b", port), owner_b2);
  CHECK(wait_connected(owner_a, "node-b"));
  stop(a);
  stop(b2);
}

TEST_CASE_FIXTURE(fixture, "nodes: a peer that is not the configured node is refused") {
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  auto b = spawn(params("node-b", 0), owner_b);
  auto port = port_of(b.node);
  auto a = spawn(params("node-a", 0, {{"node-x", {"127.0.0.1", port}}}), owner_a);
  std::string reason;
  owner_a->receive(
      [&](closed_atom, const std::string& peer, const std::string& why, bool) {
        CHECK(peer == "node-x");
        reason = why;
      },
      caf::after(10s) >> [] { FAIL("no refusal"); });
  // Told by node-b itself, during setup: the dialer's proof named node-x.
  CHECK(reason == "peer 127.0.0.1:" + std::to_string(port) +
                      " (node-x): the peer refused this session: this is node 'node-b', not "
                      "node 'node-x' as the dialer expected");
  // ... an answer that stays: the owner hears that too (the directory
  // fails what waits for node-x at once).
  bool wrong = false;
  owner_a->receive([&](wrong_node_atom, const std::string& peer,
                       const std::string&) { wrong = peer == "node-x"; },
                   caf::after(5s) >> [] {});
  CHECK(wrong);
  stop(a);
  stop(b);
}

TEST_CASE_FIXTURE(fixture, "nodes: two nodes that dial each other keep one connection") {
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  // Ports known in advance: each node must be configured with the other's.
  auto probe_a = spawn(params("probe-a", 0), owner_a);
  auto probe_b = spawn(params("probe-b", 0), owner_b);
  auto port_a = port_of(probe_a.node), port_b = port_of(probe_b.node);
  stop(probe_a);
  stop(probe_b);
  std::this_thread::sleep_for(100ms);  // the probes let go of the ports
  auto a = spawn(params("node-a", port_a, {{"node-b", {"127.0.0.1", port_b}}}), owner_a);
  auto b = spawn(params("node-b", port_b, {{"node-a", {"127.0.0.1", port_a}}}), owner_b);
  REQUIRE(wait_connected(owner_a, "node-b"));
  REQUIRE(wait_connected(owner_b, "node-a"));
  // Settled: no loss reported, no flapping, for a while.
  int reports = 0;
  for (auto* owner : {&owner_a, &owner_b})
    while ((*owner)->receive(
               [&](closed_atom, const std::string& peer, const std::string& why, bool) {
                 ++reports;
                 MESSAGE("closed " << peer << ": " << why);
               },
               [&](connected_atom, const std::string& peer, bool) {
                 ++reports;
                 MESSAGE("connected again " << peer);
               },
               caf::after(1s) >> [] {}),
           false) {
    }
  CHECK(reports == 0);
  // Both route over the one connection kept: its dialer's end on one side,
  // its acceptor's on the other. (Which one depends on timing: dials that
  // cross both get in and the one node-a, the smaller name, dialed stays;
  // a dial that arrives after the other session is live is refused.)
  auto ab = a.x->route_to("node-b"), ba = b.x->route_to("node-a");
  REQUIRE(ab);
  REQUIRE(ba);
  CHECK(ab->dialed() != ba->dialed());
  stop(a);
  stop(b);
}

TEST_CASE_FIXTURE(fixture, "exchange: proxies of a peer's actors are bounded per peer") {
  exchange_params p;
  p.node_name = "node-a";
  p.max_proxies_per_peer = 2;
  auto x = exchange::make(*sys, p);
  auto one = x->proxy_for("node-b", 1);
  CHECK(one);
  CHECK(x->proxy_for("node-b", 2));
  CHECK_FALSE(x->proxy_for("node-b", 3));   // a third sender of node-b's: refused
  CHECK(x->proxy_for("node-b", 1) == one);  // one already known still is
  CHECK(x->proxy_for("node-c", 1));         // the bound is per peer
  x->lose_peer("node-b", make_error(errc::not_connected, "test"));
  CHECK(x->proxy_for("node-b", 3));  // its proxies went with it
  x->clear();
}
