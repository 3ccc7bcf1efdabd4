// The handle table alone: which handles become proxies, through CAF's own
// serializers as the exchange's codec uses them; the bound per peer; the
// node ids a decode could not name; proxies killed one by one and by peer.
#include <riomesh/actors/peers/handle_table.hpp>

#include <caf/actor_proxy.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/make_actor.hpp>

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace riomesh::actors;

namespace {

// Stands in for the exchange's remote proxy: records why it was killed.
class test_proxy final : public caf::actor_proxy {
 public:
  test_proxy(caf::actor_config& cfg, std::string* killed_with)
      : caf::actor_proxy(cfg), killed_with_(killed_with) {}
  void enqueue(caf::mailbox_element_ptr, caf::execution_unit*) override {}
  bool add_backlink(caf::abstract_actor*) override { return false; }
  bool remove_backlink(caf::abstract_actor*) override { return false; }
  void kill_proxy(caf::execution_unit* ctx, caf::error reason) override {
    *killed_with_ = home_system().render(reason);
    cleanup(std::move(reason), ctx);
  }

 private:
  std::string* killed_with_;
};

node_identity identity(std::uint8_t host, std::uint32_t process = 7) {
  node_identity id;
  id.process_id = process;
  id.host_id[0] = host;
  return id;
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<node_table> nodes = std::make_shared<node_table>();
  std::vector<std::string> made;               // "peer/actor id", in order
  std::map<std::uint64_t, std::string> kills;  // actor id -> why
  std::unique_ptr<handle_table> table;

  explicit fixture(std::size_t max_per_peer = 8) {
    cfg.set("scheduler.max-threads", 1);
    sys = std::make_unique<caf::actor_system>(cfg);
    nodes->learn("self", identity(1), {});
    table = std::make_unique<handle_table>(
        *sys, "self", nodes, max_per_peer,
        [this](const std::string& peer, const caf::node_id& nid, caf::actor_id aid) {
          made.push_back(peer + "/" + std::to_string(aid));
          caf::actor_config c;
          return caf::make_actor<test_proxy, caf::strong_actor_ptr>(aid, nid, sys.get(), c,
                                                                    &kills[aid]);
        });
  }
  ~fixture() { table->clear(); }

  // A handle of actor `aid` of the node `id`, as it arrives: written by
  // CAF, read back through the table's codec.
  caf::strong_actor_ptr read_handle(const node_identity& id, caf::actor_id aid) {
    std::string dummy;
    caf::actor_config c;
    auto written = caf::make_actor<test_proxy, caf::strong_actor_ptr>(aid, node_id_of(id),
                                                                      sys.get(), c, &dummy);
    std::vector<char> bytes;
    caf::binary_serializer out{*sys, bytes};
    REQUIRE_FALSE(out(written));
    static_cast<test_proxy*>(written->get())->kill_proxy(nullptr, caf::error{});
    caf::strong_actor_ptr back;
    caf::binary_deserializer in{table->codec(), bytes};
    REQUIRE_FALSE(in(back));
    return back;
  }
};

}  // namespace

TEST_CASE("handle table: a known node's handle is its one proxy, an unknown node's is noted") {
  fixture f;

  f.nodes->learn("node-b", identity(2), {});
  decode_scope met;
  auto p = f.read_handle(identity(2), 42);
  REQUIRE(p);
  CHECK(p->id() == 42);
  CHECK(p->node() == node_id_of(identity(2)));
  CHECK(f.read_handle(identity(2), 42) == p);  // one identity, one proxy
  CHECK(f.made == std::vector<std::string>{"node-b/42"});
  CHECK(f.table->size() == 1);
  CHECK(met.unknown().empty());

  CHECK_FALSE(f.read_handle(identity(3), 5));  // nobody named node 3 yet
  CHECK_FALSE(f.read_handle(identity(3), 6));
  REQUIRE(met.unknown().size() == 1);  // asked of once
  CHECK(met.unknown()[0] == node_table::key_of(identity(3)));
  CHECK(met.unresolvable().empty());
  CHECK(f.table->size() == 1);
}

TEST_CASE("handle table: a node the sender could not name either is unresolvable") {
  fixture f;
  f.table->unresolvable(node_table::key_of(identity(0xab, 9)));
  decode_scope met;
  CHECK_FALSE(f.read_handle(identity(0xab, 9), 5));
  CHECK(met.unknown().empty());
  CHECK(met.unresolvable() == "ab000000..#9");
}

// CAF finds a handle of the system's own node id itself; a node id the
// table has under this node's name (another incarnation's) or a null
// handle must not become a proxy either.
TEST_CASE("handle table: a handle under this node's own name, or a null one, is never a proxy") {
  fixture f;
  decode_scope met;
  CHECK_FALSE(f.read_handle(identity(1), 5));
  CHECK_FALSE(f.table->make_proxy(node_id_of(identity(1)), 0));
  CHECK(f.made.empty());
  CHECK(f.table->size() == 0);
}

TEST_CASE("handle table: a peer's proxies stop at the bound") {
  fixture f(2);
  f.nodes->learn("node-b", identity(2), {});
  f.nodes->learn("node-c", identity(3), {});
  CHECK(f.read_handle(identity(2), 1));
  CHECK(f.read_handle(identity(2), 2));
  CHECK_FALSE(f.read_handle(identity(2), 3));  // node-b's bound
  CHECK(f.read_handle(identity(3), 1));        // another peer's are its own
  CHECK(f.table->size() == 3);
  f.table->kill("node-b", 1, caf::make_error(caf::sec::runtime_error, "exited"));
  CHECK(f.read_handle(identity(2), 3));  // room again
}

TEST_CASE("handle table: killed one by one, and all of a lost peer's at once") {
  fixture f;
  f.nodes->learn("node-b", identity(2), {});
  f.nodes->learn("node-c", identity(3), {});
  auto b1 = f.read_handle(identity(2), 1), b2 = f.read_handle(identity(2), 2);
  auto c1 = f.read_handle(identity(3), 3);
  f.table->kill("node-b", 1, caf::make_error(caf::sec::runtime_error, "actor 1 exited"));
  CHECK(f.kills[1].find("actor 1 exited") != std::string::npos);
  CHECK(f.kills[2].empty());
  f.table->kill("node-b", 1, caf::make_error(caf::sec::runtime_error, "again"));  // gone: no-op
  CHECK(f.kills[1].find("again") == std::string::npos);
  CHECK(f.table->size() == 2);  // counted off once
  f.table->lose("node-b", caf::make_error(caf::sec::runtime_error, "node-b lost"));
  CHECK(f.kills[2].find("node-b lost") != std::string::npos);
  CHECK(f.kills[3].empty());  // node-c's stays
  CHECK(f.table->size() == 1);
  CHECK(f.table->peers() == std::vector<std::string>{"node-c"});
  auto again = f.read_handle(identity(2), 2);  // a new one, if node-b comes back
  CHECK(again);
  CHECK(again != b2);
}

TEST_CASE("handle table: a peer's session names its node, once per id") {
  fixture f;
  caf::node_id nid;
  REQUIRE(f.table->learn_peer("node-b", identity(2), "10.0.0.2:4000", nid));
  CHECK(nid == node_id_of(identity(2)));
  CHECK(f.table->node_id_of("node-b") == nid);
  REQUIRE(f.nodes->by_name("node-b"));
  CHECK(f.nodes->by_name("node-b")->address.host == "10.0.0.2");
  caf::node_id other;
  CHECK_FALSE(f.table->learn_peer("node-x", identity(2), "10.0.0.9:4000", other));  // b's id
  CHECK_FALSE(other);
  // A peer that told no identity (a tool) gets one from its name.
  REQUIRE(f.table->learn_peer("tool", node_identity{}, "10.0.0.3:5000", nid));
  CHECK(nid == node_id_of(synthesized_identity("tool")));
  CHECK(f.table->proxy_for("tool", nid, 9) == f.table->proxy_for("tool", 9));
  CHECK(f.made == std::vector<std::string>{"tool/9"});
}
