// What the receive arenas of a node's sessions may take together
// (memory.arena_budget), as one connection sees it: its arena grows only
// by what the budget grants, and no session takes more than its fair
// share for long, so a busy peer cannot starve the others. The session
// registry keeps the books (session_registry.hpp); thread-safe, since a
// segment's memory comes back when its last view drops, on any thread.
#pragma once

#include <cstdint>
#include <limits>

namespace riomesh::actors {

class receive_budget {
 public:
  virtual ~receive_budget() = default;
  // May this session's arenas take `bytes` more? Taken if so. A smaller
  // segment to shrink into is granted always: the larger one goes soon.
  virtual bool take(std::uint64_t bytes, bool shrinking) = 0;
  virtual void give(std::uint64_t bytes) = 0;
  // The budget over the live sessions: what each may hold when all are busy.
  virtual std::uint64_t fair_share() const = 0;
};

// No budget: every growth granted (connections used without a node).
class unbounded_budget final : public receive_budget {
 public:
  bool take(std::uint64_t, bool) override { return true; }
  void give(std::uint64_t) override {}
  std::uint64_t fair_share() const override { return std::numeric_limits<std::uint64_t>::max(); }
};

}  // namespace riomesh::actors
