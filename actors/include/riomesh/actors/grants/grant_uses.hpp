// The holder's side of grants: its uses of peers' grants in flight, from
// the moment one goes until the owner answers it (or its connection ends),
// and the reads that wait for a map slot at the owner for their
// destination. Plain bookkeeping, tested alone (grant_uses_test.cpp); the
// exchange moves the bytes and tells the actors.
#pragma once

#include <riomesh/actors/grants/grant_table.hpp>
#include <riomesh/buffer.hpp>
#include <riomesh/grant.hpp>

#include <caf/actor_control_block.hpp>
#include <caf/message.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::actors {

// One use, until the owner answers.
struct grant_wait {
  std::string owner;
  std::uint64_t link = 0;  // the connection it went on
  caf::strong_actor_ptr status_to, then_to;
  caf::message then;
  std::optional<std::uint64_t> into_map;  // a read's destination, mapped for the owner
  bool atomic = false;                    // its status carries the old value
  // Done one-sided by this node: an atomic's old word came with its
  // completion, not with the owner's answer.
  bool one_sided = false;
  std::uint64_t fetched = 0;
  // What it moves once done: a write's bytes out, a read's in (counted).
  std::uint64_t bytes_out = 0, bytes_in = 0;
};

// Uses in flight on one connection, at most: the owner answers each
// through its queue to us, which must not fill with them.
constexpr std::size_t max_grant_uses = 256;

// Any thread starts a use (the runtime's grant calls); the I/O thread ends
// them (answers, completions, a connection's end): one lock.
class grant_uses {
 public:
  // Ids of uses, never reused: an answer names the use it ends.
  std::uint64_t next_op() { return next_op_++; }
  // False when max_grant_uses wait on its connection already: the use
  // does not go.
  bool add(std::uint64_t op, grant_wait w);
  // The use `op`, ended, if it went on `link` (an answer on another
  // connection names another node's use: nothing).
  std::optional<grant_wait> take(std::uint64_t op, std::uint64_t link);
  // A one-sided use's value, kept until the owner's answer ends it.
  void note_fetched(std::uint64_t op, std::uint64_t value);
  // Reads on `link` whose destination the owner holds a map of.
  std::size_t reads_in_flight(std::uint64_t link) const;
  // Every use on a connection that ended, oldest first.
  std::vector<std::pair<std::uint64_t, grant_wait>> drop_link(std::uint64_t link);
  std::size_t size() const;

 private:
  struct per_link {
    std::size_t uses = 0, reads = 0;
  };
  void forget(std::uint64_t link, const grant_wait& w);

  mutable std::mutex lock_;
  std::map<std::uint64_t, grant_wait> waits_;
  std::map<std::uint64_t, per_link> links_;
  std::atomic<std::uint64_t> next_op_{1};
};

// A read of a grant waiting for a map slot at the owner for its
// destination.
struct parked_read {
  grant g;
  std::uint64_t op = 0, offset = 0;
  buffer into;
  caf::strong_actor_ptr status_to, then_to;
  caf::message then;
};

// Reads waiting for a map slot, per connection, oldest first: in order,
// each retried as one before it ends. The I/O thread's alone.
class parked_reads {
 public:
  // Reads wait on `link` already: a new one goes behind them.
  bool waiting(std::uint64_t link) const;
  // Behind the others; false when max_grant_uses wait already.
  bool push_back(std::uint64_t link, parked_read r);
  // Back at the front: it was the oldest and still finds no slot.
  bool push_front(std::uint64_t link, parked_read r);
  std::optional<parked_read> pop_front(std::uint64_t link);
  std::size_t size(std::uint64_t link) const;
  // Everything waiting on a connection that ended.
  std::deque<parked_read> drop_link(std::uint64_t link);

 private:
  std::map<std::uint64_t, std::deque<parked_read>> by_link_;
};

}  // namespace riomesh::actors
