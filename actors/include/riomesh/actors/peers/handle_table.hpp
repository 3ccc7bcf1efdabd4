// The handle table: which actor of which node a handle in a message
// names. A handle is written as CAF writes one, the actor's id and its
// node's id; read back, one of another node's actors becomes a proxy of
// it, kept here by node id and actor id (CAF's proxy registry, which its
// deserializers ask through codec()), counted per peer against a bound.
// A node id nobody named yet is noted for the decode running on this
// thread (decode_scope), so that what carried it waits for the sender to
// name that node; one the sender could not name either is refused.
// Proxies are looked up and ended from any thread; decodes, which make
// them and note what they could not name, run on the I/O thread. The proxies themselves (and what a
// new one tells its node) are the maker's, so the table knows nothing of links.
#pragma once

#include <riomesh/actors/peers/node_identity.hpp>
#include <riomesh/actors/peers/node_table.hpp>
#include <riomesh/actors/peers/proxy_census.hpp>
#include <riomesh/actors/peers/unresolvable_nodes.hpp>

#include <caf/actor_control_block.hpp>
#include <caf/execution_unit.hpp>
#include <caf/fwd.hpp>
#include <caf/node_id.hpp>
#include <caf/proxy_registry.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace riomesh::actors {

// CAF's node ids and riomesh's node identities (session_hello.hpp).
node_identity identity_of(const caf::node_id& n);
caf::node_id node_id_of(const node_identity& id);
// For a peer that told no identity (a tool, not a node): one from its name.
node_identity synthesized_identity(const std::string& name);

// Around a decode on this thread: collects the nodes of handles the table
// could not name (unknown: ask the sender; unresolvable: the sender did
// not know them either).
class decode_scope {
 public:
  decode_scope();
  ~decode_scope();
  decode_scope(const decode_scope&) = delete;
  decode_scope& operator=(const decode_scope&) = delete;
  std::vector<node_table::key> unknown() const;
  std::string unresolvable() const;  // empty: none

  // What the decode met. On the stack: a decode costs no allocation for
  // it unless it meets such a handle.
  struct met {
    std::vector<node_table::key> unknown, unresolvable;
  };

 private:
  met met_;
  met* prev_;
};

class handle_table final : public caf::proxy_registry::backend {
 public:
  // Makes the proxy of actor `aid` of `peer`, whose node id is `nid`.
  using proxy_maker = std::function<caf::strong_actor_ptr(
      const std::string& peer, const caf::node_id& nid, caf::actor_id aid)>;

  // `nodes` is shared with the session registry, which refuses a session
  // claiming an id another node holds. `self` is this node's name: a
  // handle of its own node is never a proxy.
  handle_table(caf::actor_system& sys, std::string self, std::shared_ptr<node_table> nodes,
               std::size_t max_proxies_per_peer, proxy_maker make);
  ~handle_table() override;
  handle_table(const handle_table&) = delete;
  handle_table& operator=(const handle_table&) = delete;

  // The context CAF's serializers run in: a local actor's handle is
  // written with this node's id, another's read back as its proxy.
  caf::execution_unit* codec() { return &codec_; }
  node_table& nodes() { return *nodes_; }

  // `peer`'s session, from `seen_at` ("host:port"), told `id` (or nothing:
  // one from its name), whose node id goes to `out`. False if another node
  // holds that id: the session must go.
  bool learn_peer(const std::string& peer, const node_identity& id, const std::string& seen_at,
                  caf::node_id& out);
  // The node id handles of `peer`'s actors carry.
  caf::node_id node_id_of(const std::string& peer) const;
  // The proxy of `peer`'s actor `id` (made if new), by its node id when
  // known, else by the peer's name; null at the peer's bound.
  caf::strong_actor_ptr proxy_for(const std::string& peer, const caf::node_id& nid,
                                  std::uint64_t id);
  caf::strong_actor_ptr proxy_for(const std::string& peer, std::uint64_t id);
  // The remote actor exited: its proxy dies with `why`.
  void kill(const std::string& peer, std::uint64_t id, const caf::error& why);
  // The peer is lost: all its proxies die with `why`.
  void lose(const std::string& peer, const caf::error& why);
  // Kills every proxy, while the actor system still runs.
  void clear();
  // The peer could not name this node id either.
  void unresolvable(const node_table::key& k) { unresolvable_.note(k); }
  std::vector<std::string> peers() const { return census_.peers(); }
  std::size_t size() const { return census_.total(); }

  // caf::proxy_registry::backend: a handle of another node, being read.
  caf::strong_actor_ptr make_proxy(caf::node_id nid, caf::actor_id aid) override;
  void set_last_hop(caf::node_id*) override {}

 private:
  class codec_unit final : public caf::execution_unit {
   public:
    codec_unit(caf::actor_system& sys, caf::proxy_registry& proxies);
    // Serialization never schedules; should anything, the workers run it.
    void exec_later(caf::resumable* job) override;
  };

  std::string self_;
  std::shared_ptr<node_table> nodes_;
  proxy_maker make_;
  proxy_census census_;
  // The I/O thread's own (its decodes alone note and ask).
  unresolvable_nodes unresolvable_;
  // Holds proxies strongly: a remote actor keeps one identity here (one
  // proxy, one address) until it exits or its node is lost.
  caf::proxy_registry proxies_;
  codec_unit codec_;
};

}  // namespace riomesh::actors
