// Remote memory grants: the holder's side. A use goes out as a grant_use
// envelope (behind a write's bytes, on the same link), is kept in `uses`
// (grant_uses.hpp) until the owner's grant_status answers it, and its
// status goes to the actor that asked: (grant_done_atom, op, status,
// detail), with an atomic's old word as a fifth element. A read where the
// connection reads one-sided, and an atomic, the holder does itself
// (grant_holder_fetch.cpp); elsewhere it maps its destination for the
// owner, waiting in `reads` while the owner's map slots are taken.
//
// Threads: write() and atomic() run on the caller's thread (a write's
// bytes go ahead of the caller's later messages); read() on the owner's
// link's I/O thread, where `into` is mapped for the owner to write to;
// answers and a connection's end on the I/O thread.
#pragma once

#include <riomesh/actors/connection/direct_fetch.hpp>
#include <riomesh/actors/grants/grant_port.hpp>
#include <riomesh/actors/grants/grant_uses.hpp>
#include <riomesh/actors/grants/grant_wire.hpp>

#include <atomic>
#include <cstdint>
#include <string>

namespace riomesh::actors {

struct envelope;

class grant_holder {
 public:
  struct counters_type {
    std::atomic<std::uint64_t> bytes_out{0}, bytes_in{0};  // of uses that ended ok
    std::atomic<std::uint64_t> fetched{0};                 // reads and atomics done one-sided
  };

  grant_holder(grant_port& port, std::string node_name)
      : port_(port), node_name_(std::move(node_name)) {}

  // Ids of uses, never reused: the status names the use it ends.
  std::uint64_t next_op() { return uses_.next_op(); }
  // The use `op` of grant `g`; `then` goes to its actor on the owner's
  // node once the owner has confirmed the bytes are in place.
  void write(const grant& g, std::uint64_t op, std::uint64_t offset, buffer data,
             const caf::strong_actor_ptr& status_to, const caf::strong_actor_ptr& then_to,
             const caf::message& then);
  void read(link& l, const grant& g, std::uint64_t op, std::uint64_t offset, buffer into,
            const caf::strong_actor_ptr& status_to, const caf::strong_actor_ptr& then_to,
            const caf::message& then);
  // Fetch-and-add (`a` the addend) or compare-and-swap (`a` expected, `b`
  // swapped in) on the 8-byte word at `offset`.
  void atomic(const grant& g, std::uint64_t op, grant_op kind, std::uint64_t offset,
              std::uint64_t a, std::uint64_t b, const caf::strong_actor_ptr& status_to,
              const caf::strong_actor_ptr& then_to, const caf::message& then);
  // A use that cannot start: its status, at once.
  void failed(std::uint64_t op, const caf::strong_actor_ptr& status_to, grant_status st,
              const std::string& detail, bool atomic = false);
  // The owner's grant_status envelope.
  void answered(link& l, const envelope& in);
  // l's connection ended: every use on it, and every read waiting for it,
  // is dropped with `reason`.
  void link_closed(link& l, const std::string& reason);

  const counters_type& counters() const { return count_; }
  std::size_t in_flight() const { return uses_.size(); }

 private:
  void done(std::uint64_t op, grant_wait w, grant_status st, const std::string& detail,
            std::uint64_t value = 0);
  // `m` (what goes ahead of it, if anything) with the grant_use envelope
  // asking `r` of grant `id`; a link that refuses it ends the use at once.
  void send_use(link& l, std::uint64_t id, std::uint64_t op, const grant_request& r,
                outbound_message m);
  void submit_use(link& l, std::uint64_t op, outbound_message m);
  // grant_holder_fetch.cpp: a read or an atomic done one-sided.
  void fetch(link& l, const grant& g, std::uint64_t op, grant_request r, direct_fetch f,
             grant_wait w);
  // The oldest read waiting for a map slot on `l`, tried again.
  void unpark_read(link& l);
  // What ends a use that could not go out as it should: its status, and
  // `not_mapped` said in the grant's terms (empty: as the link says it).
  failure_callback use_failure(std::uint64_t op, std::uint64_t link, const std::string& owner,
                               std::string not_mapped);
  // "node 'x': ", before what went wrong at a grant's owner.
  static std::string about(const std::string& owner);
  // Why a use did not go: max_grant_uses of `owner`'s grants are in flight.
  static std::string too_many(const std::string& owner);

  grant_port& port_;
  std::string node_name_;
  grant_uses uses_;
  parked_reads reads_;      // the I/O thread's
  bool unparking_ = false;  // unpark_read is retrying `reads_`
  counters_type count_;
};

}  // namespace riomesh::actors
