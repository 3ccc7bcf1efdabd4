// The export table (export_table.hpp) and the guards of published actors
// that answer members some messages only, under one lock of their own:
// every delivery looks its target up here on the I/O thread, while
// workers publish and actors exit on any thread. Each call holds the lock
// for the tables alone; what it hands back is acted on outside it.
#pragma once

#include <riomesh/actors/reach/export_table.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::actors {

template <class Strong, class Weak, class Guard>
class export_registry {
 public:
  using table = export_table<Strong, Weak>;
  using published_actor = typename table::published_actor;

  // Publishes actor `id` as `name`; it is watched from now on (the caller
  // watches for its exit).
  void publish(const std::string& name, std::uint64_t id, Strong handle, Weak weak,
               std::string interface) {
    std::lock_guard<std::mutex> lock(lock_);
    exports_.publish(name, id, std::move(handle), std::move(weak), std::move(interface));
    exports_.watched(id);
  }
  // See export_table::unpublish.
  bool unpublish(const std::string& name, std::uint64_t& unkept) {
    std::lock_guard<std::mutex> lock(lock_);
    return exports_.unpublish(name, unkept);
  }
  std::optional<published_actor> published(const std::string& name) const {
    std::lock_guard<std::mutex> lock(lock_);
    auto* p = exports_.published(name);
    return p ? std::optional<published_actor>(*p) : std::nullopt;
  }
  // Name and interface of every published actor.
  std::vector<std::pair<std::string, std::string>> published_names() const {
    std::vector<std::pair<std::string, std::string>> out;
    std::lock_guard<std::mutex> lock(lock_);
    for (const auto& name : exports_.names())
      if (auto* p = exports_.published(name))
        out.emplace_back(name, p->interface);
    return out;
  }
  // Actor `id` answers members through `g` from now on.
  void guard(std::uint64_t id, Guard g) {
    std::lock_guard<std::mutex> lock(lock_);
    guards_[id] = std::move(g);
  }

  // Gives `peer` access `a` to actor `id` (export_table::learn); true the
  // first time it is exported at all: the caller watches for its exit.
  bool learn(std::uint64_t id, const Weak& weak, const std::string& peer, Strong keep, access a) {
    std::lock_guard<std::mutex> lock(lock_);
    bool watch = exports_.learn(id, weak, peer, std::move(keep), a);
    if (watch)
      exports_.watched(id);
    return watch;
  }
  // What a message from `peer` to actor `id` goes to (null if `peer` may
  // not reach it) and the actor's guard (empty if it has none).
  std::pair<Weak, Guard> target(std::uint64_t id, const std::string& peer) const {
    std::pair<Weak, Guard> out;
    std::lock_guard<std::mutex> lock(lock_);
    out.first = exports_.find(id, peer);
    if (auto g = guards_.find(id); g != guards_.end())
      out.second = g->second;  // few actors have one: copied only for them
    return out;
  }
  // What `peer` may do to actor `id`, and the actor if anything.
  std::pair<access, Weak> reach(std::uint64_t id, const std::string& peer) const {
    std::lock_guard<std::mutex> lock(lock_);
    auto a = exports_.access_of(id, peer);
    return {a, a == access::none ? Weak{} : exports_.find(id)};
  }
  // See export_table::introduce.
  bool introduce(std::uint64_t id, const std::string& by, const std::string& peer) {
    std::lock_guard<std::mutex> lock(lock_);
    return exports_.introduce(id, by, peer);
  }

  // Actor `id` exited: the peers to tell; its guard goes.
  std::set<std::string> exited(std::uint64_t id) {
    std::lock_guard<std::mutex> lock(lock_);
    guards_.erase(id);
    return exports_.exited(id);
  }
  // `peer` is lost: what it alone kept alive, to let go of.
  std::vector<Strong> forget_peer(const std::string& peer) {
    std::lock_guard<std::mutex> lock(lock_);
    return exports_.forget_peer(peer);
  }
  // Forgets every export, letting go of them outside the lock; the ids
  // they had.
  std::vector<std::uint64_t> clear() {
    table gone;
    {
      std::lock_guard<std::mutex> lock(lock_);
      std::swap(gone, exports_);
    }
    return gone.ids();
  }

  std::size_t exported() const {
    std::lock_guard<std::mutex> lock(lock_);
    return exports_.exported();
  }
  std::size_t published_count() const {
    std::lock_guard<std::mutex> lock(lock_);
    return exports_.names().size();
  }

 private:
  mutable std::mutex lock_;
  table exports_;
  std::map<std::uint64_t, Guard> guards_;
};

}  // namespace riomesh::actors
