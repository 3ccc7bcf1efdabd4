// Which link carries each peer, and what the exchange noted of each peer's
// links: why the last one ended (for the errors of whoever asks for the
// peer later) and whether one refused a message as congested (until it
// drained). One lock, held for the table alone: any thread looks a route
// up per message, the I/O thread and the node actor change them.
#pragma once

#include <riomesh/actors/peers/recent_reasons.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace riomesh::actors {

template <class Link>
class route_table {
 public:
  std::shared_ptr<Link> find(const std::string& peer) const {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = routes_.find(peer);
    return it == routes_.end() ? nullptr : it->second;
  }
  // `l` carries `peer` from now on (null: nothing does).
  void set(const std::string& peer, std::shared_ptr<Link> l) {
    std::shared_ptr<Link> gone;  // let go of outside the lock
    std::lock_guard<std::mutex> guard(lock_);
    auto it = routes_.find(peer);
    if (it == routes_.end()) {
      if (l)
        routes_.emplace(peer, std::move(l));
      return;
    }
    gone = std::move(it->second);
    if (l)
      it->second = std::move(l);
    else
      routes_.erase(it);
  }
  // `l` carries `peer` unless a link does already; true if `l` does now.
  bool set_first(const std::string& peer, std::shared_ptr<Link> l) {
    std::lock_guard<std::mutex> guard(lock_);
    return routes_.emplace(peer, std::move(l)).second;
  }
  // `l`, a link to `peer`, ended for `why`: it carries `peer` no more (a
  // newer link that does stays).
  void ended(const std::string& peer, const Link* l, const std::string& why) {
    std::shared_ptr<Link> gone;  // let go of outside the lock
    std::lock_guard<std::mutex> guard(lock_);
    ended_.note(peer, why);
    auto it = routes_.find(peer);
    if (it != routes_.end() && it->second.get() == l) {
      gone = std::move(it->second);
      routes_.erase(it);
    }
  }
  // Why `peer`'s last link ended, if one did.
  std::optional<std::string> last_end(const std::string& peer) const {
    std::lock_guard<std::mutex> guard(lock_);
    auto* why = ended_.of(peer);
    return why ? std::optional<std::string>(*why) : std::nullopt;
  }

  void congested(const std::string& peer) {
    std::lock_guard<std::mutex> guard(lock_);
    congested_.insert(peer);
  }
  void drained(const std::string& peer) {
    std::lock_guard<std::mutex> guard(lock_);
    congested_.erase(peer);
  }
  bool is_congested(const std::string& peer) const {
    std::lock_guard<std::mutex> guard(lock_);
    return congested_.count(peer) > 0;
  }

  // Drops every route, keeping what was noted.
  void clear() {
    std::map<std::string, std::shared_ptr<Link>> gone;  // let go of outside the lock
    std::lock_guard<std::mutex> guard(lock_);
    gone.swap(routes_);
  }

 private:
  mutable std::mutex lock_;
  std::map<std::string, std::shared_ptr<Link>> routes_;
  recent_reasons ended_;
  std::set<std::string> congested_;
};

}  // namespace riomesh::actors
