// The local actors peers may address, by id: the published ones (by name,
// kept alive while published) and every actor that sent through a proxy
// (peers answer it by id). A sender is kept alive while a connected peer
// knows it, as CAF's own middleman keeps what it exported: an actor that
// sent a request or a subscription and waits for what comes back has no
// other reference. It goes when it exits, or when every peer that knew it
// is lost. The table also remembers which peers know each id, so they can
// be told when the actor exits.
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
  // The id of the actor unpublished, if no connected peer keeps it alive
  // (the caller then stops keeping it findable), else 0; false if the name
  // was not published.
  bool unpublish(const std::string& name, std::uint64_t& unkept) {
    auto it = published_.find(name);
    if (it == published_.end())
      return false;
    auto k = known_.find(it->second.id);
    unkept = k == known_.end() || !k->second.keep ? it->second.id : 0;
    published_.erase(it);
    return true;
  }
  const published_actor* published(const std::string& name) const {
    auto it = published_.find(name);
    return it == published_.end() ? nullptr : &it->second;
  }

  // Makes `id` addressable by `peer`, and keeps it alive (`keep`); true
  // the first time the id is exported at all (the caller then watches for
  // its exit).
  bool learn(std::uint64_t id, const Weak& handle, const std::string& peer, Strong keep) {
    auto [it, fresh] = known_.try_emplace(id);
    if (fresh)
      it->second.handle = handle;
    it->second.peers.insert(peer);
    if (!it->second.keep)
      it->second.keep = std::move(keep);
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

  // Forgets `peer`; hands back the actors no connected peer knows any
  // more, for the caller to let go of outside its lock (letting go may end
  // an actor, whose exit comes back to the table).
  std::vector<Strong> forget_peer(const std::string& peer) {
    std::vector<Strong> released;
    for (auto& [id, k] : known_)
      if (k.peers.erase(peer) > 0 && k.peers.empty() && k.keep)
        released.push_back(std::move(k.keep));
    return released;
  }
  // Every kept actor, for the same reason (the runtime is done).
  std::vector<Strong> release_all() {
    std::vector<Strong> released;
    for (auto& [id, k] : known_)
      if (k.keep)
        released.push_back(std::move(k.keep));
    return released;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& [name, p] : published_)
      out.push_back(name);
    return out;
  }
  std::size_t exported() const { return known_.size(); }
  std::vector<std::uint64_t> ids() const {
    std::vector<std::uint64_t> out;
    for (auto& [id, k] : known_)
      out.push_back(id);
    return out;
  }

 private:
  struct known_actor {
    Weak handle;
    Strong keep;  // while a connected peer knows it
    std::set<std::string> peers;
    bool watched = false;
  };
  std::map<std::string, published_actor> published_;
  std::map<std::uint64_t, known_actor> known_;
};

}  // namespace riomesh::actors
