// The exchange's tables of peers, each alone: routes, messages held for nodes
// being dialed, the proxies per peer, node ids nobody could name.
#include <riomesh/actors/peers/proxy_census.hpp>
#include <riomesh/actors/peers/route_table.hpp>
#include <riomesh/actors/peers/route_waits.hpp>
#include <riomesh/actors/peers/unresolvable_nodes.hpp>

#include <caf/node_id.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <ostream>
#include <string>

using namespace riomesh::actors;

namespace {

caf::node_id node(std::uint32_t process) {
  caf::node_id::default_data::host_id_type host{};
  host[0] = 7;
  return caf::make_node_id(process, host);
}

node_table::key key(std::uint32_t process) {
  node_table::key k{};
  k.first = process;
  return k;
}

}  // namespace

TEST_CASE("route waits: held only for a node being dialed, in order, up to the bound") {
  route_waits<std::unique_ptr<int>> w(2);
  auto m = std::make_unique<int>(1);
  CHECK_FALSE(w.hold("node-b", m));  // nobody dials it: the caller refuses
  CHECK(m);                          // and still has its message
  w.expect("node-b");
  CHECK(w.hold("node-b", m));
  CHECK_FALSE(m);
  auto two = std::make_unique<int>(2), three = std::make_unique<int>(3);
  CHECK(w.hold("node-b", two));
  CHECK_FALSE(w.hold("node-b", three));
  CHECK(three);
  w.expect("node-b");  // dialed again: what waits stays
  CHECK(w.peers() == std::vector<std::string>{"node-b"});
  auto out = w.take("node-b");
  REQUIRE(out.size() == 2);
  CHECK(*out[0] == 1);
  CHECK(*out[1] == 2);
  CHECK(w.take("node-b").empty());
  CHECK_FALSE(w.hold("node-b", three));  // taken: expected no more
  w.expect("node-c");
  w.clear();
  CHECK(w.peers().empty());
}

TEST_CASE("proxy census: bounded per peer, released one by one, forgotten with the peer") {
  proxy_census c(3);
  CHECK(c.admit("node-b", node(1)));
  CHECK(c.admit("node-b", node(1)));
  CHECK(c.admit("node-b", node(2)));  // restarted: a second node id
  CHECK_FALSE(c.admit("node-b", node(2)));
  CHECK(c.admit("node-c", node(3)));  // other peers are not held back
  CHECK(c.total() == 4);
  c.release("node-b");
  CHECK(c.admit("node-b", node(2)));
  c.release("node-x");  // none such: nothing
  CHECK(c.total() == 4);
  auto nids = c.forget("node-b");
  CHECK(nids.size() == 2);
  CHECK(nids.count(node(1)) == 1);
  CHECK(c.total() == 1);
  CHECK(c.peers() == std::vector<std::string>{"node-c"});
  CHECK(c.forget("node-b").empty());
  c.clear();
  CHECK(c.total() == 0);
}

TEST_CASE("unresolvable nodes: remembered, the oldest forgotten past the bound") {
  unresolvable_nodes u(3);
  for (std::uint32_t p = 1; p <= 3; ++p)
    u.note(key(p));
  u.note(key(2));  // again: no second place in the order
  CHECK(u.size() == 3);
  CHECK(u.contains(key(1)));
  u.note(key(4));
  CHECK_FALSE(u.contains(key(1)));
  CHECK(u.contains(key(2)));
  CHECK(u.contains(key(4)));
  CHECK(u.size() == 3);
}

TEST_CASE("route table: a newer link keeps its route when an older one ends") {
  route_table<int> routes;  // any link type will do
  auto first = std::make_shared<int>(0), second = std::make_shared<int>(0);
  CHECK_FALSE(routes.find("node-b"));
  CHECK(routes.set_first("node-b", first));
  CHECK_FALSE(routes.set_first("node-b", second));  // two links met: the first routes
  CHECK(routes.find("node-b") == first);
  routes.set("node-b", second);  // the node actor chose the other
  routes.ended("node-b", first.get(), "replaced");
  CHECK(routes.find("node-b") == second);  // the older one's end leaves it
  CHECK(routes.last_end("node-b") == std::optional<std::string>("replaced"));
  routes.ended("node-b", second.get(), "peer reset the connection");
  CHECK_FALSE(routes.find("node-b"));
  CHECK(routes.last_end("node-b") == std::optional<std::string>("peer reset the connection"));
  CHECK_FALSE(routes.last_end("node-c"));
  routes.set("node-c", first);
  routes.set("node-c", nullptr);
  CHECK_FALSE(routes.find("node-c"));
}

TEST_CASE("route table: congested until drained, and what was noted outlives the routes") {
  route_table<int> routes;  // any link type will do
  auto l = std::make_shared<int>(0);
  routes.set("node-b", l);
  CHECK_FALSE(routes.is_congested("node-b"));
  routes.congested("node-b");
  CHECK(routes.is_congested("node-b"));
  CHECK_FALSE(routes.is_congested("node-c"));
  routes.drained("node-b");
  CHECK_FALSE(routes.is_congested("node-b"));
  routes.ended("node-c", nullptr, "refused");
  routes.clear();
  CHECK_FALSE(routes.find("node-b"));
  CHECK(l.use_count() == 1);  // let go of
  CHECK(routes.last_end("node-c") == std::optional<std::string>("refused"));
}
