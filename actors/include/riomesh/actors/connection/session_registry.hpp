// Which sessions are live, by peer name, node-wide: what an acceptor asks
// before it lets a new session become the one to a name. A second session
// for a name that has a live one never silently takes its place:
//   - refused, unless
//   - the peer proved its name with its node key and is a new incarnation
//     of that node (it restarted; the old session is dead and not yet
//     noticed): it replaces the old one.
// Two nodes dialing each other at once both get their sessions granted
// (neither was live when asked); the node keeps the one the node with the
// smaller name dialed, on both sides alike. Thread-safe: each connection
// asks from wherever it runs.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace riomesh::actors {

class session_registry {
 public:
  enum class verdict { granted, replaces, refused };
  struct claim {
    std::string peer;
    std::uint64_t incarnation = 0;  // the peer's, from its session terms
    bool name_proven = false;       // by its node key
  };
  struct answer {
    verdict v = verdict::granted;
    std::string why;  // for refused
  };

  // A ticket for one connection, to claim and end with.
  std::uint64_t open();
  // An accepted connection's session: may it be the session to c.peer?
  // Granted and replacing claims are live from here on.
  answer ask(std::uint64_t ticket, const claim& c);
  // A dialed connection's session is set up (its acceptor granted it).
  void established(std::uint64_t ticket, const std::string& peer, std::uint64_t incarnation);
  // The connection is gone.
  void ended(std::uint64_t ticket);

  std::size_t live(const std::string& peer) const;

 private:
  struct session {
    std::string peer;
    std::uint64_t incarnation = 0;
  };
  mutable std::mutex lock_;
  std::uint64_t next_ = 1;
  std::map<std::uint64_t, session> live_;  // by ticket
};

}  // namespace riomesh::actors
