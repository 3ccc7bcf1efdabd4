// The local actors peers may address, by id: the published ones (by name,
// kept alive while published) and every actor that sent through a proxy
// (peers answer it by id; held weakly, so a reference from afar never
// keeps an actor alive). It also remembers which peers know each id, so
// they can be told when the actor exits.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace riomesh::actors {

template <class Strong, class Weak>
class export_table {
 public:
  struct published_actor {
    std::uint64_t id = 0;
    Strong handle;
    std::string interface;  // its typed interface, one message type per line
  };

  void publish(const std::string& name, std::uint64_t id, Strong handle, Weak weak,
               std::string interface) {
    published_[name] = published_actor{id, std::move(handle), std::move(interface)};
    known_[id].handle = std::move(weak);
  }
  bool unpublish(const std::string& name) { return published_.erase(name) > 0; }
  const published_actor* published(const std::string& name) const {
    auto it = published_.find(name);
    return it == published_.end() ? nullptr : &it->second;
  }

  // Makes `id` addressable by `peer`; true the first time the id is
  // exported at all (the caller then watches for its exit).
  bool learn(std::uint64_t id, const Weak& handle, const std::string& peer) {
    auto [it, fresh] = known_.try_emplace(id);
    if (fresh)
      it->second.handle = handle;
    it->second.peers.insert(peer);
    return fresh || !it->second.watched;
  }
  void watched(std::uint64_t id) { known_[id].watched = true; }

  // The actor for `id`, if exported; a null Weak if not.
  Weak find(std::uint64_t id) const {
    auto it = known_.find(id);
    return it == known_.end() ? Weak{} : it->second.handle;
  }

  // The actor exited: forget it, and its names; returns the peers to tell.
  std::set<std::string> exited(std::uint64_t id) {
    std::set<std::string> peers;
    if (auto it = known_.find(id); it != known_.end()) {
      peers = std::move(it->second.peers);
      known_.erase(it);
    }
    for (auto it = published_.begin(); it != published_.end();)
      it = it->second.id == id ? published_.erase(it) : std::next(it);
    return peers;
  }

  void forget_peer(const std::string& peer) {
    for (auto& [id, k] : known_)
      k.peers.erase(peer);
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& [name, p] : published_)
      out.push_back(name);
    return out;
  }
  std::size_t exported() const { return known_.size(); }

 private:
  struct known_actor {
    Weak handle;
    std::set<std::string> peers;
    bool watched = false;
  };
  std::map<std::string, published_actor> published_;
  std::map<std::uint64_t, known_actor> known_;
};

}  // namespace riomesh::actors
