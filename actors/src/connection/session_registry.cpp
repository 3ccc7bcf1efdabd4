#include <riomesh/actors/connection/session_registry.hpp>

namespace riomesh::actors {

std::uint64_t session_registry::open() {
  std::lock_guard<std::mutex> guard(lock_);
  return next_++;
}

session_registry::answer session_registry::ask(std::uint64_t ticket, const claim& c) {
  std::lock_guard<std::mutex> guard(lock_);
  const session* other = nullptr;
  for (const auto& [t, s] : live_)
    if (s.peer == c.peer && t != ticket)
      other = &s;
  answer a;
  if (other) {
    if (c.name_proven && c.incarnation != other->incarnation) {
      a.v = verdict::replaces;
    } else {
      a.v = verdict::refused;
      a.why = "a session with node '" + c.peer + "' is live; a second one is refused" +
              (c.incarnation != other->incarnation
                   ? " (the node may have restarted: it gets in once the old session is found "
                     "gone, or at once if it proves its name with a node key)"
                   : "");
      return a;
    }
  }
  live_[ticket] = {c.peer, c.incarnation};
  return a;
}

void session_registry::established(std::uint64_t ticket, const std::string& peer,
                                   std::uint64_t incarnation) {
  std::lock_guard<std::mutex> guard(lock_);
  live_[ticket] = {peer, incarnation};
}

void session_registry::ended(std::uint64_t ticket) {
  std::lock_guard<std::mutex> guard(lock_);
  live_.erase(ticket);
}

std::size_t session_registry::live(const std::string& peer) const {
  std::lock_guard<std::mutex> guard(lock_);
  std::size_t n = 0;
  for (const auto& [t, s] : live_)
    n += s.peer == peer;
  return n;
}

}  // namespace riomesh::actors
