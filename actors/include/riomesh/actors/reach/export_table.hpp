// What each peer may reach of this node's actors, and how: a member is
// trusted only with what it was given.
//   - published, by name: every member may message it and watch it;
//   - the sender of a message to a peer, or an actor a peer resolved by
//     name: that peer may message it and watch it (access::reach);
//   - handed to a peer, its handle written into a message to it, or
//     introduced to it by a member that was handed it: that peer may also
//     link its own actors to it, so their exits reach it (access::link).
// An actor a connected peer may reach is kept alive while it is connected,
// as CAF's own middleman keeps what it exported: an actor that sent a
// request and waits for what comes back has no other reference. It goes
// when it exits, or when every peer that could reach it is lost. The table
// remembers who could, to tell them of its exit.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::actors {

enum class access : std::uint8_t { none, reach, link };

template <class Strong, class Weak>
class export_table {
 public:
  struct published_actor {
    std::uint64_t id = 0;
    Strong handle;
    std::string interface;  // its typed interface, one message type per line
  };

  // Introductions waiting for the peer they name, node-wide at most.
  static constexpr std::size_t max_introductions = 4096;

  void publish(const std::string& name, std::uint64_t id, Strong handle, Weak weak,
               std::string interface) {
    if (auto it = published_.find(name); it != published_.end())
      drop_published_id(it->second.id);
    published_[name] = published_actor{id, std::move(handle), std::move(interface)};
    ++published_ids_[id];
    known_[id].handle = std::move(weak);
  }
  // The id of the actor unpublished, if no connected peer keeps it alive
  // (the caller then stops keeping it findable), else 0; false if the name
  // was not published.
  bool unpublish(const std::string& name, std::uint64_t& unkept) {
    auto it = published_.find(name);
    if (it == published_.end())
      return false;
    auto id = it->second.id;
    auto k = known_.find(id);
    unkept = k == known_.end() || !k->second.keep ? id : 0;
    published_.erase(it);
    drop_published_id(id);
    return true;
  }
  const published_actor* published(const std::string& name) const {
    auto it = published_.find(name);
    return it == published_.end() ? nullptr : &it->second;
  }

  // Gives `peer` access `a` (never less than it had) to actor `id`, and
  // keeps the actor alive (`keep`); true the first time the id is exported
  // at all (the caller then watches for its exit).
  bool learn(std::uint64_t id, const Weak& handle, const std::string& peer, Strong keep,
             access a = access::reach) {
    auto [it, fresh] = known_.try_emplace(id);
    if (fresh)
      it->second.handle = handle;
    auto& granted = it->second.peers[peer];
    granted = std::max(granted, a);
    if (!it->second.keep)
      it->second.keep = std::move(keep);
    return fresh || !it->second.watched;
  }
  void watched(std::uint64_t id) { known_[id].watched = true; }

  // What `peer` may do to actor `id`.
  access access_of(std::uint64_t id, const std::string& peer) const {
    auto it = known_.find(id);
    if (it == known_.end())
      return access::none;
    access a = published_ids_.count(id) ? access::reach : access::none;
    if (auto p = it->second.peers.find(peer); p != it->second.peers.end())
      a = std::max(a, p->second);
    if (introduced_.count({id, peer}))
      a = access::link;
    return a;
  }
  // The actor `id`, if `peer` may reach it; a null Weak if not. (On every
  // message delivered: the cheapest test first.)
  Weak find(std::uint64_t id, const std::string& peer) const {
    auto it = known_.find(id);
    if (it == known_.end())
      return Weak{};
    if (published_ids_.count(id) || it->second.peers.count(peer) || introduced_.count({id, peer}))
      return it->second.handle;
    return Weak{};
  }
  // The actor `id`, whoever may reach it; a null Weak if nobody may.
  Weak find(std::uint64_t id) const {
    auto it = known_.find(id);
    return it == known_.end() ? Weak{} : it->second.handle;
  }

  // `by` hands actor `id` to `peer`: `peer` may link to it from now on.
  // False if `by` was not handed it itself, or too many introductions wait.
  bool introduce(std::uint64_t id, const std::string& by, const std::string& peer) {
    if (access_of(id, by) != access::link)
      return false;
    if (!introduced_.insert({id, peer}).second)
      return true;
    order_.push_back({id, peer});
    if (order_.size() > max_introductions) {
      introduced_.erase(order_.front());
      order_.pop_front();
    }
    return true;
  }

  // The actor exited: forget it, and its names; returns the peers to tell.
  std::set<std::string> exited(std::uint64_t id) {
    std::set<std::string> peers;
    if (auto it = known_.find(id); it != known_.end()) {
      for (auto& [peer, a] : it->second.peers)
        peers.insert(peer);
      known_.erase(it);
    }
    for (auto it = published_.begin(); it != published_.end();)
      it = it->second.id == id ? published_.erase(it) : std::next(it);
    published_ids_.erase(id);
    forget_introductions([id](const auto& e) { return e.first == id; });
    return peers;
  }

  // Forgets `peer`; hands back the actors no connected peer may reach any
  // more, for the caller to let go of outside its lock (letting go may end
  // an actor, whose exit comes back to the table).
  std::vector<Strong> forget_peer(const std::string& peer) {
    std::vector<Strong> released;
    for (auto& [id, k] : known_)
      if (k.peers.erase(peer) > 0 && k.peers.empty() && k.keep)
        released.push_back(std::move(k.keep));
    forget_introductions([&peer](const auto& e) { return e.second == peer; });
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
  std::size_t introductions() const { return order_.size(); }
  std::vector<std::uint64_t> ids() const {
    std::vector<std::uint64_t> out;
    for (auto& [id, k] : known_)
      out.push_back(id);
    return out;
  }

 private:
  struct known_actor {
    Weak handle;
    Strong keep;  // while a connected peer may reach it
    std::map<std::string, access> peers;
    bool watched = false;
  };
  using introduction = std::pair<std::uint64_t, std::string>;

  void drop_published_id(std::uint64_t id) {
    if (auto it = published_ids_.find(id); it != published_ids_.end() && --it->second == 0)
      published_ids_.erase(it);
  }
  template <class Pred>
  void forget_introductions(Pred gone) {
    for (auto it = order_.begin(); it != order_.end();)
      if (gone(*it)) {
        introduced_.erase(*it);
        it = order_.erase(it);
      } else {
        ++it;
      }
  }

  std::map<std::string, published_actor> published_;
  std::map<std::uint64_t, std::size_t> published_ids_;  // names per published id
  std::map<std::uint64_t, known_actor> known_;
  std::set<introduction> introduced_;
  std::deque<introduction> order_;  // oldest first, for the bound
};

}  // namespace riomesh::actors
