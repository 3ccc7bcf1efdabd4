// The directory's bookkeeping without actors: who waits on which peer,
// and which local actors peers may address.
#include <riomesh/actors/reach/export_registry.hpp>
#include <riomesh/actors/reach/export_table.hpp>
#include <riomesh/actors/requests/pending_table.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>

using namespace riomesh::actors;

TEST_CASE("pending table: an answer counts only from the peer that was asked") {
  pending_table<std::string> t;
  auto x = t.add("node-b", "request x");
  auto y = t.add("node-c", "request y");
  CHECK(x != y);
  CHECK_FALSE(t.take("node-c", x));  // c cannot answer (or fail) b's request
  CHECK(t.size() == 2);
  CHECK(t.take("node-b", x) == std::optional<std::string>{"request x"});
  CHECK_FALSE(t.take("node-b", x));  // answered once
  CHECK_FALSE(t.take("node-c", 12345));
  CHECK(t.take_all("node-c") == std::vector<std::string>{"request y"});
  CHECK(t.size() == 0);
}

TEST_CASE("pending table: a lost peer hands back all its waits, and only its") {
  pending_table<int> t;
  for (int i = 0; i < 10; ++i)
    t.add(i % 2 ? "odd" : "even", i);
  auto odd = t.take_all("odd");
  CHECK(odd.size() == 5);
  for (int v : odd)
    CHECK(v % 2 == 1);
  int seen = 0;
  t.for_each("even", [&](std::uint64_t id, int& v) {
    CHECK(*t.peer_of(id) == "even");
    CHECK(v % 2 == 0);
    ++seen;
  });
  CHECK(seen == 5);
  CHECK(t.take_all().size() == 5);
}

TEST_CASE("pending table: wire ids stay within the request bits of a message id") {
  pending_table<int> t;
  CHECK(pending_table<int>::max_id == 0x0FFFFFFFFFFFFFFFull);
  for (int i = 0; i < 1000; ++i) {
    auto id = t.add("p", i);
    CHECK(id >= 1);
    CHECK(id <= pending_table<int>::max_id);
  }
}

namespace {
// Strong and weak handles, as CAF's are: a weak one reads null once the
// last strong one is gone.
using strong = std::shared_ptr<int>;
using weak = std::weak_ptr<int>;
using table = export_table<strong, weak>;
}  // namespace

TEST_CASE("export table: published names, ids peers learn, and who to tell on exit") {
  table t;
  auto worker = std::make_shared<int>(7);
  t.publish("worker", 1, worker, worker, "iface");
  REQUIRE(t.published("worker"));
  CHECK(t.published("worker")->id == 1);
  CHECK(t.published("worker")->interface == "iface");
  CHECK_FALSE(t.published("other"));
  CHECK((t.find(1).lock() == worker));

  // A sender peers learn by id: watched once, kept alive while a peer
  // that knows it is connected.
  auto sender = std::make_shared<int>(9);
  weak sender_weak = sender;
  CHECK(t.learn(2, sender, "node-b", sender));
  t.watched(2);
  CHECK_FALSE(t.learn(2, sender, "node-c", sender));
  CHECK(t.exported() == 2);
  sender.reset();
  CHECK_FALSE(t.find(2).expired());        // peers may still address it
  CHECK(t.forget_peer("node-b").empty());  // node-c still knows it
  auto released = t.forget_peer("node-c");
  REQUIRE(released.size() == 1);
  released.clear();
  CHECK(sender_weak.expired());  // no peer knows it: it is let go
  // A peer learning it again (it is alive elsewhere) keeps it once more.
  auto again = std::make_shared<int>(9);
  CHECK_FALSE(t.learn(2, again, "node-b", again));
  CHECK(t.release_all().size() == 1);
  CHECK(t.forget_peer("node-c").empty());
  t.learn(2, again, "node-c", again);

  CHECK(t.exited(2) == std::set<std::string>{"node-b", "node-c"});
  CHECK(t.exited(2).empty());

  // A lost peer is forgotten: it is not told of exits any more.
  t.learn(1, worker, "node-b", worker);
  t.forget_peer("node-b");
  CHECK(t.exited(1).empty());
  CHECK_FALSE(t.published("worker"));  // an exited actor's names go too
  std::uint64_t unkept = 0;
  CHECK_FALSE(t.unpublish("worker", unkept));
  // Unpublished: findable no more, unless a connected peer keeps it.
  t.publish("kept", 3, worker, worker, "");
  t.learn(3, worker, "node-b", worker);
  t.publish("loose", 4, worker, worker, "");
  CHECK(t.unpublish("kept", unkept));
  CHECK(unkept == 0);
  CHECK(t.unpublish("loose", unkept));
  CHECK(unkept == 4);
  CHECK(t.ids() == std::vector<std::uint64_t>{3, 4});
}

#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/peers/node_table.hpp>

namespace {

riomesh::actors::session_registry::claim claim_of(std::string peer, std::uint64_t incarnation,
                                                  bool proven, bool dialed = false) {
  riomesh::actors::session_registry::claim c;
  c.peer = std::move(peer);
  c.incarnation = incarnation;
  c.name_proven = proven;
  c.dialed = dialed;
  c.arena = 1 << 20;
  return c;
}

}  // namespace

TEST_CASE(
    "session registry: a second session for a live name is refused, a proven restart "
    "replaces") {
  using riomesh::actors::session_registry;
  session_registry r;
  auto first = r.open(), second = r.open(), third = r.open();
  CHECK(r.ask(first, claim_of("node-a", 7, false)).v == session_registry::verdict::granted);
  CHECK(r.live("node-a") == 1);
  // The same run again (a member claiming the name, or a late duplicate).
  auto a = r.ask(second, claim_of("node-a", 7, true));
  CHECK(a.v == session_registry::verdict::refused);
  CHECK(a.why == "a session with node 'node-a' is live; a second one is refused");
  // Another run, not proven: perhaps a restart, perhaps an impostor.
  a = r.ask(second, claim_of("node-a", 8, false));
  CHECK(a.v == session_registry::verdict::refused);
  CHECK(a.why.find("the node may have restarted") != std::string::npos);
  // Another run proven by its key: it restarted.
  CHECK(r.ask(third, claim_of("node-a", 8, true)).v == session_registry::verdict::replaces);
  CHECK(r.live("node-a") == 2);
  r.ended(first);
  CHECK(r.live("node-a") == 1);
  // A dialed session is live once its peer is judged; gone, the name is free again.
  auto dialed = r.open();
  CHECK(r.ask(dialed, claim_of("node-b", 1, false, true)).v == session_registry::verdict::granted);
  CHECK(r.ask(r.open(), claim_of("node-b", 1, false)).v == session_registry::verdict::refused);
  r.ended(dialed);
  CHECK(r.ask(r.open(), claim_of("node-b", 1, false)).v == session_registry::verdict::granted);
}

TEST_CASE("session registry: sessions and their arenas within the node's budget, by name") {
  using riomesh::actors::session_registry;
  session_registry r({2, 3u << 20});
  auto t1 = r.open(), t2 = r.open(), t3 = r.open();
  CHECK(r.ask(t1, claim_of("n1", 1, false)).v == session_registry::verdict::granted);
  CHECK(r.ask(t2, claim_of("n2", 1, false)).v == session_registry::verdict::granted);
  auto full = r.ask(t3, claim_of("n3", 1, false));
  CHECK(full.v == session_registry::verdict::refused);
  CHECK(full.why == "this node has 2 sessions, its most (cluster.max_sessions)");
  r.ended(t1);
  auto big = claim_of("n3", 1, false);
  big.arena = 3u << 20;
  auto over = r.ask(t3, big);
  CHECK(over.v == session_registry::verdict::refused);
  CHECK(over.why.find("would pass memory.arena_budget (3145728 bytes)") != std::string::npos);
  CHECK(r.ask(t3, claim_of("n3", 1, false)).v == session_registry::verdict::granted);
  CHECK(r.arena_bytes() == 2u << 20);
  r.ended(t2);
  r.ended(t3);
  CHECK(r.sessions() == 0);
  CHECK(r.arena_bytes() == 0);
}

TEST_CASE("session registry: a node id another node holds is refused, an old run's too") {
  using namespace riomesh::actors;
  auto nodes = std::make_shared<node_table>();
  session_registry r({}, nodes);
  node_identity honest;
  honest.process_id = 42;
  honest.host_id[0] = 7;
  CHECK(nodes->learn("sub-node", honest, {"127.0.0.1", 4000}));
  auto c = claim_of("impostor", 1, false);
  c.identity = honest;
  auto a = r.ask(r.open(), c);
  CHECK(a.v == session_registry::verdict::refused);
  CHECK(a.why ==
        "node 'impostor' names the CAF node id of node 'sub-node' as its own: handles of that "
        "node's actors would reach it");
  CHECK_FALSE(nodes->learn("impostor", honest, {}));
  CHECK(nodes->by_id(node_table::key_of(honest))->name == "sub-node");
  // The honest node restarts (a new process id): its old id stays its own.
  auto restarted = honest;
  restarted.process_id = 43;
  CHECK(nodes->learn("sub-node", restarted, {"127.0.0.1", 4000}));
  CHECK(r.ask(r.open(), c).v == session_registry::verdict::refused);
  CHECK_FALSE(nodes->by_id(node_table::key_of(honest)));
}

TEST_CASE("node table: bounded, and what is pinned or live stays") {
  using namespace riomesh::actors;
  node_table t(3);
  auto id = [](std::uint8_t n) {
    node_identity i;
    i.process_id = n;
    i.host_id[0] = n;
    return i;
  };
  t.pin("configured");
  CHECK(t.learn("configured", id(1), {}));
  CHECK(t.learn("live", id(2), {}));
  t.live("live", true);
  CHECK(t.learn("learned-1", id(3), {}));
  CHECK(t.learn("learned-2", id(4), {}));  // makes room: learned-1 goes
  CHECK(t.size() == 3);
  CHECK_FALSE(t.by_name("learned-1"));
  CHECK(t.by_name("configured"));
  CHECK(t.by_name("live"));
  t.live("live", false);
  CHECK(t.learn("learned-3", id(5), {}));  // now "live" is the oldest that may go
  CHECK_FALSE(t.by_name("live"));
}

namespace {
using registry = export_registry<strong, weak, std::string>;  // a guard: any value
}  // namespace

TEST_CASE("export registry: a delivery finds its target and guard, only for a peer given it") {
  registry r;
  auto worker = std::make_shared<int>(7), sender = std::make_shared<int>(9);
  r.publish("worker", 1, worker, worker, "iface");
  r.guard(1, "members: ping only");
  auto [to_worker, guard] = r.target(1, "node-b");  // published: every member
  CHECK((to_worker.lock() == worker));
  CHECK(guard == "members: ping only");
  CHECK(r.target(2, "node-b").first.expired());                     // nobody was given actor 2
  CHECK(r.learn(2, sender, "node-b", sender, access::reach));       // first export: watch it
  CHECK_FALSE(r.learn(2, sender, "node-c", sender, access::link));  // watched already
  CHECK((r.target(2, "node-b").first.lock() == sender));
  CHECK(r.target(2, "node-b").second.empty());   // no guard
  CHECK(r.target(2, "node-d").first.expired());  // d was given nothing
  auto [a, found] = r.reach(2, "node-c");
  CHECK(a == access::link);
  CHECK((found.lock() == sender));
  CHECK(r.reach(2, "node-d").first == access::none);
  CHECK(r.reach(2, "node-d").second.expired());
  CHECK(r.exported() == 2);
  CHECK(r.published_count() == 1);
  CHECK(r.published_names() ==
        std::vector<std::pair<std::string, std::string>>{{"worker", "iface"}});
}

TEST_CASE("export registry: an exit names who to tell and takes the guard, and clear lets go") {
  registry r;
  auto worker = std::make_shared<int>(7);
  r.publish("worker", 1, worker, worker, "iface");
  r.guard(1, "g");
  r.learn(1, worker, "node-b", worker, access::link);
  CHECK(r.introduce(1, "node-b", "node-c"));  // b was handed it
  CHECK_FALSE(r.introduce(1, "node-d", "node-c"));
  CHECK(r.exited(1) == std::set<std::string>{"node-b"});
  CHECK(r.target(1, "node-b").second.empty());  // its guard went with it
  auto other = std::make_shared<int>(8);
  r.learn(5, other, "node-b", other, access::reach);
  auto held = other.use_count();
  auto ids = r.clear();
  CHECK(std::find(ids.begin(), ids.end(), 5) != ids.end());
  CHECK(other.use_count() == held - 1);  // let go of
  CHECK(r.exported() == 0);
}
