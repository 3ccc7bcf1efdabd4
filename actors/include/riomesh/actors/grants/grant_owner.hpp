// Remote memory grants: the owner's side. It lends regions to peers
// (mapped for what the holder may do without this node's CPU), judges
// every use a holder claims against its grant table, and answers it:
// puts a use-once write's bytes in place, writes out a read where the
// connection does not read one-sided, runs atomics with this CPU's, and
// delivers a `then` that rode on a use once the verdict is ok.
//
// Threads: lend() runs on the connection's I/O thread (the iomap
// manager's work), take_back() on any; uses and a connection's end come
// on the I/O thread. One lock, around the table.
#pragma once

#include <riomesh/actors/grants/grant_port.hpp>
#include <riomesh/actors/grants/grant_table.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace riomesh::actors {

struct envelope;

class grant_owner {
 public:
  struct counters_type {
    std::atomic<std::uint64_t> bytes_in{0};   // written into our grants
    std::atomic<std::uint64_t> bytes_out{0};  // read from them, by us or one-sided
    std::atomic<std::uint64_t> served{0};  // reads served by writing, atomics run, once-writes put
    std::atomic<std::uint64_t> thens_carried{0};  // `then` messages delivered from their use
    // A use-once write's bytes, placed where they arrived and copied into
    // the region: the one copy such a write costs.
    std::atomic<std::uint64_t> copied_in{0};
  };

  grant_owner(grant_port& port, std::string node_name)
      : port_(port), node_name_(std::move(node_name)) {}

  // Lends `region` to l's peer, mapped for it to write into if it may;
  // nothing and `error` if it cannot be mapped.
  std::optional<grant> lend(link& l, buffer region, std::uint8_t rights, bool once,
                            std::string& error);
  // Takes a grant back: a later use is refused. Its map, if any, is the
  // caller's to take down on its link.
  std::optional<granted> take_back(std::uint64_t id);
  // A holder's grant_use envelope (with a use-once write's bytes placed).
  void used(link& l, inbound_message& m);
  // l's connection ended: its grants' maps went with it.
  void link_closed(link& l);

  const counters_type& counters() const { return count_; }
  std::size_t size() const;

 private:
  void judge_done(link& l, const envelope& in, grant_request& r, const grant_verdict& v);
  void deliver_then(link& l, const envelope& in, grant_request& r);
  void answer(link& l, std::uint64_t op, grant_status st, const std::string& detail,
              std::uint64_t value = 0);
  void serve_read(link& l, const envelope& in, grant_request& r, grant_verdict& v);

  grant_port& port_;
  std::string node_name_;
  mutable std::mutex lock_;
  grant_table given_;
  counters_type count_;
};

}  // namespace riomesh::actors
