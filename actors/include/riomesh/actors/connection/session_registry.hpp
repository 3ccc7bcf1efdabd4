// Which sessions are live, node-wide, and what each may become: asked by
// every connection once its peer has proven who it is, before either side
// exposes memory. A session is refused, with a reason both sides log, when
//   - another session for the name is live, unless the peer proved the
//     name with its node key and is a new run of that node (it restarted;
//     the old session is dead and not yet noticed): then it replaces it;
//   - its identity names a CAF node id another node holds (node_table):
//     handles of that node's actors must never route to it;
//   - cluster.max_sessions are live, or its receive arena would take the
//     node past memory.arena_budget.
// A dialed session is never refused for a live one of the same name: two
// nodes dialing each other at once both get theirs, and the node keeps the
// one the node with the smaller name dialed, on both sides alike.
// Thread-safe: each connection asks from wherever it runs.
#pragma once

#include <riomesh/actors/connection/session_hello.hpp>
#include <riomesh/actors/placement/receive_budget.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace riomesh::actors {

class node_table;

struct session_limits {
  std::size_t max_sessions = 1024;  // live at once
  std::uint64_t arena_budget = 0;   // bytes all their arenas may take; 0: unbounded
};

class session_registry {
 public:
  enum class verdict { granted, replaces, refused };
  using limits = session_limits;
  struct claim {
    std::string peer;
    std::uint64_t incarnation = 0;  // the peer's, from its hello
    bool name_proven = false;       // by its node key
    node_identity identity;         // not valid(): it told none (a tool)
    std::uint64_t arena = 0;        // what this side's receive arena takes
    bool dialed = false;            // this side dialed
  };
  struct answer {
    verdict v = verdict::granted;
    std::string why;  // for refused
  };

  explicit session_registry(limits l = {}, std::shared_ptr<node_table> nodes = nullptr);

  // A ticket for one connection, to claim and end with.
  std::uint64_t open();
  // May this connection's session become c.peer's? Granted and replacing
  // claims are live from here on.
  answer ask(std::uint64_t ticket, const claim& c);
  // The connection is gone.
  void ended(std::uint64_t ticket);

  std::size_t live(const std::string& peer) const;
  std::size_t sessions() const;
  std::uint64_t arena_bytes() const;

  // A live session's arena grows by `bytes` if the budget has room or
  // `always` (true), or gives them back; an ended session's are no longer counted.
  bool grow(std::uint64_t ticket, std::uint64_t bytes, bool always = false);
  void shrink(std::uint64_t ticket, std::uint64_t bytes);
  // The budget over the live sessions (unbounded: the largest number).
  std::uint64_t fair_share() const;

 private:
  struct session {
    std::string peer;
    std::uint64_t incarnation = 0;
    std::uint64_t arena = 0;
  };
  limits limits_;
  std::shared_ptr<node_table> nodes_;
  mutable std::mutex lock_;
  std::uint64_t next_ = 1;
  std::uint64_t arena_bytes_ = 0;
  std::map<std::uint64_t, session> live_;  // by ticket
};

// One session's view of the books, for its connection's arena.
class session_budget final : public receive_budget {
 public:
  session_budget(std::shared_ptr<session_registry> r, std::uint64_t ticket)
      : registry_(std::move(r)), ticket_(ticket) {}
  bool take(std::uint64_t bytes, bool shrinking) override {
    return registry_->grow(ticket_, bytes, shrinking);
  }
  void give(std::uint64_t bytes) override { registry_->shrink(ticket_, bytes); }
  std::uint64_t fair_share() const override { return registry_->fair_share(); }

 private:
  std::shared_ptr<session_registry> registry_;
  std::uint64_t ticket_;
};

}  // namespace riomesh::actors
