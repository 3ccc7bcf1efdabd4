// The nodes this node knows, by name and by the node id their actor handles
// carry (node_identity: a process id and a host id), and where each
// listens. Peers tell their own in their authenticated hello; a peer tells
// of a third node when asked (a node query). Names are the nodes' proven
// identity; node ids are what CAF puts in handles, so an id once bound to a
// name is never moved to another: a session claiming it is refused
// (session_registry). Bounded: beyond `max_nodes`, the oldest entry that
// is neither pinned (this node, configured peers) nor live makes room.
// Thread-safe.
#pragma once

#include <riomesh/actors/peers/node_identity.hpp>
#include <riomesh/config/settings.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace riomesh::actors {

class node_table {
 public:
  using key = std::pair<std::uint32_t, std::array<std::uint8_t, 20>>;
  static key key_of(const node_identity& id) { return {id.process_id, id.host_id}; }

  struct node {
    std::string name;
    node_identity id;
    config::endpoint address;  // where it listens (host empty: unknown)
  };

  explicit node_table(std::size_t max_nodes = 4096) : max_(max_nodes) {}

  // `name` has this id and listens at `address`; false (nothing learned) if
  // the id is another name's. A name's new id (the node restarted) replaces
  // its old one.
  bool learn(const std::string& name, const node_identity& id, const config::endpoint& address);
  // Never made room for: this node, and the peers its file names.
  void pin(const std::string& name);
  // A session with it is up (live) or ended: a live node is never made room for.
  void live(const std::string& name, bool up);
  std::optional<node> by_name(const std::string& name) const;
  std::optional<node> by_id(const key& k) const;
  // The name an id is bound to, if any (an earlier run's id included).
  std::optional<std::string> holder_of(const key& k) const;
  // The node listening at `at`, if one is known to.
  std::optional<node> by_address(const config::endpoint& at) const;
  std::size_t size() const;

 private:
  void make_room();
  std::optional<std::string> holder_locked(const key& k) const;
  static constexpr std::size_t max_retired = 1024;

  std::size_t max_;
  mutable std::mutex lock_;
  std::map<std::string, node> by_name_;
  std::map<key, std::string> names_;
  std::deque<std::pair<key, std::string>> retired_;  // ids of earlier runs, newest last
  std::set<std::string> pinned_;
  std::map<std::string, std::size_t> live_;
  std::map<std::string, std::uint64_t> learned_at_;  // for making room, oldest first
  std::uint64_t clock_ = 0;
};

// Where a peer listens, from its identity and the address its connection
// came from (`seen`, "host:port"): its own host if it named one, else the
// one it connects from.
config::endpoint listen_address(const node_identity& id, const std::string& seen);

}  // namespace riomesh::actors
