// The nodes this node knows, by name and by the node id their actor handles
// carry (node_identity: a process id and a host id), and where each
// listens. Peers tell their own in their session terms; a peer tells of a
// third node when asked (a node query). Names are the nodes' authenticated
// identity; node ids are what CAF puts in handles. Thread-safe.
#pragma once

#include <riomesh/actors/connection/session_setup.hpp>
#include <riomesh/config/settings.hpp>

#include <map>
#include <mutex>
#include <optional>
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

  // `name` has this id and listens at `address`. A name's new id (the node
  // restarted) replaces its old one.
  void learn(const std::string& name, const node_identity& id, const config::endpoint& address);
  std::optional<node> by_name(const std::string& name) const;
  std::optional<node> by_id(const key& k) const;
  // The node listening at `at`, if one is known to.
  std::optional<node> by_address(const config::endpoint& at) const;
  std::size_t size() const;

 private:
  mutable std::mutex lock_;
  std::map<std::string, node> by_name_;
  std::map<key, std::string> names_;
};

// Where a peer listens, from its identity and the address its connection
// came from (`seen`, "host:port"): its own host if it named one, else the
// one it connects from.
config::endpoint listen_address(const node_identity& id, const std::string& seen);

}  // namespace riomesh::actors
