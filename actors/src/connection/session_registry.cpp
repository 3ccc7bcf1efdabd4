#include <riomesh/actors/connection/session_registry.hpp>

#include <riomesh/actors/peers/node_table.hpp>

#include <algorithm>
#include <limits>

namespace riomesh::actors {

session_registry::session_registry(limits l, std::shared_ptr<node_table> nodes)
    : limits_(l), nodes_(std::move(nodes)) {}

std::uint64_t session_registry::open() {
  std::lock_guard<std::mutex> guard(lock_);
  return next_++;
}

session_registry::answer session_registry::ask(std::uint64_t ticket, const claim& c) {
  answer a;
  auto refuse = [&a](std::string why) {
    a.v = verdict::refused;
    a.why = std::move(why);
    return a;
  };
  if (nodes_ && c.identity.valid())
    if (auto holder = nodes_->holder_of(node_table::key_of(c.identity));
        holder && *holder != c.peer)
      return refuse("node '" + c.peer + "' names the CAF node id of node '" + *holder +
                    "' as its own: handles of that node's actors would reach it");
  std::lock_guard<std::mutex> guard(lock_);
  const session* other = nullptr;
  const session* mine = nullptr;
  for (const auto& [t, s] : live_) {
    if (t == ticket)
      mine = &s;
    else if (s.peer == c.peer)
      other = &s;
  }
  if (other && !c.dialed) {
    if (c.name_proven && c.incarnation != other->incarnation) {
      a.v = verdict::replaces;
    } else {
      return refuse("a session with node '" + c.peer + "' is live; a second one is refused" +
                    (c.incarnation != other->incarnation
                         ? " (the node may have restarted: it gets in once the old session is "
                           "found gone, or at once if it proves its name with a node key)"
                         : ""));
    }
  }
  // What this ticket already holds is its own to reuse.
  std::uint64_t held = mine ? mine->arena : 0;
  if (!mine && live_.size() >= limits_.max_sessions)
    return refuse("this node has " + std::to_string(live_.size()) +
                  " sessions, its most (cluster.max_sessions)");
  if (limits_.arena_budget && arena_bytes_ - held + c.arena > limits_.arena_budget)
    return refuse("the receive arenas of its " + std::to_string(live_.size()) + " sessions take " +
                  std::to_string(arena_bytes_) + " bytes; one more of " + std::to_string(c.arena) +
                  " would pass memory.arena_budget (" + std::to_string(limits_.arena_budget) +
                  " bytes)");
  arena_bytes_ = arena_bytes_ - held + c.arena;
  live_[ticket] = {c.peer, c.incarnation, c.arena};
  return a;
}

void session_registry::ended(std::uint64_t ticket) {
  std::lock_guard<std::mutex> guard(lock_);
  if (auto it = live_.find(ticket); it != live_.end()) {
    arena_bytes_ -= it->second.arena;
    live_.erase(it);
  }
}

std::size_t session_registry::live(const std::string& peer) const {
  std::lock_guard<std::mutex> guard(lock_);
  std::size_t n = 0;
  for (const auto& [t, s] : live_)
    n += s.peer == peer;
  return n;
}

std::size_t session_registry::sessions() const {
  std::lock_guard<std::mutex> guard(lock_);
  return live_.size();
}

std::uint64_t session_registry::arena_bytes() const {
  std::lock_guard<std::mutex> guard(lock_);
  return arena_bytes_;
}

bool session_registry::grow(std::uint64_t ticket, std::uint64_t bytes, bool always) {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = live_.find(ticket);
  if (it == live_.end())
    return false;
  if (!always && limits_.arena_budget &&
      bytes > limits_.arena_budget - std::min(arena_bytes_, limits_.arena_budget))
    return false;
  it->second.arena += bytes;
  arena_bytes_ += bytes;
  return true;
}

void session_registry::shrink(std::uint64_t ticket, std::uint64_t bytes) {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = live_.find(ticket);
  if (it == live_.end())
    return;
  bytes = std::min(bytes, it->second.arena);
  it->second.arena -= bytes;
  arena_bytes_ -= bytes;
}

std::uint64_t session_registry::fair_share() const {
  if (!limits_.arena_budget)
    return std::numeric_limits<std::uint64_t>::max();
  std::lock_guard<std::mutex> guard(lock_);
  return limits_.arena_budget / std::max<std::size_t>(live_.size(), 1);
}

}  // namespace riomesh::actors
