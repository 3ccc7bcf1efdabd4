// How many proxies of each peer's actors this node holds, against the
// bound per peer (a peer chooses how many handles it sends us), and the
// node ids they carry (a peer that restarted has had two): what to kill
// when the peer is lost. Any thread: the decoders make proxies, the I/O
// thread and the node's events end them.
#pragma once

#include <caf/node_id.hpp>

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace riomesh::actors {

class proxy_census {
 public:
  explicit proxy_census(std::size_t max_per_peer) : max_(max_per_peer) {}

  // Counts a new proxy of `peer`'s, carrying `nid`; false at the bound.
  bool admit(const std::string& peer, const caf::node_id& nid);
  // One of `peer`'s proxies is gone.
  void release(const std::string& peer);
  // The peer is lost: the node ids its proxies carried, and it is forgotten.
  std::set<caf::node_id> forget(const std::string& peer);
  std::vector<std::string> peers() const;
  std::size_t total() const;
  void clear();

 private:
  struct of_peer {
    std::size_t proxies = 0;
    std::set<caf::node_id> nodes;
  };
  std::size_t max_;
  mutable std::mutex lock_;
  std::map<std::string, of_peer> peers_;
};

}  // namespace riomesh::actors
