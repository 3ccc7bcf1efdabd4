// One-sided fetches from memory the peer mapped for us: an RDMA READ of a
// range, or an 8-byte atomic that fetches a word's old value. The peer's
// CPU takes no part; the fabric fences what this connection sends behind
// them, so a message after a fetch reaches the peer only once the fetch
// is done (RDS's fenced SEND after an RDMA READ).
//
// The connection core starts a queued message's fetch before its
// envelope; this tracks each fetch's work from then to its done event:
// the destination and its pinned registrations stay alive until then.
#pragma once

#include <riomesh/buffer.hpp>
#include <riomesh/channels/iomap_access.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace riomesh::actors {

class send_registrations;

struct direct_fetch {
  enum class kind : std::uint8_t { read, fetch_add, compare_swap };
  kind op = kind::read;
  std::uint64_t offset = 0;    // in the peer's maps
  buffer into;                 // a read's destination: all of it is read
  std::uint64_t a = 0, b = 0;  // fetch_add: a is added; compare_swap: b replaces a
  // On the I/O thread, once it completed: an atomic's old word (reads: 0).
  // Not called if the connection ends first.
  std::function<void(std::uint64_t)> done;
};

class fetch_flights {
 public:
  fetch_flights(channels::iomap_access& io, send_registrations& regs) : io_(io), regs_(regs) {}
  // Fetches in flight when the connection ended never complete: their
  // pins are given back (their `done` is not called).
  ~fetch_flights();
  fetch_flights(const fetch_flights&) = delete;
  fetch_flights& operator=(const fetch_flights&) = delete;

  enum class state {
    posted,    // all of it is in flight
    waiting,   // the send queue is full: call start() again later
    unmapped,  // it is outside the peer's maps (`why`)
    past_map,  // it starts in a map of the peer's and runs past its end
    refused,   // the fabric cannot do it (`why`): not aligned, no reads
  };           // of one that cannot go, whatever of it went completes unheard
  // Starts `f`, or resumes it where the channel stopped taking it.
  state start(direct_fetch& f, std::string& why);
  // An ioread_done or ioatomic_done event: false if it is not a fetch's.
  bool complete(const channels::event& e);
  bool idle() const { return flights_.empty(); }

 private:
  struct flight {
    buffer into;
    std::vector<std::uint64_t> leases;  // pinned registrations of `into`
    std::function<void(std::uint64_t)> done;
    std::size_t calls = 0;  // channel calls whose done event is due
    bool all_posted = false, refused = false;
  };
  state read(direct_fetch& f, flight& fl, std::string& why);
  void finish(std::map<std::uint64_t, flight>::iterator it, std::uint64_t value);

  channels::iomap_access& io_;
  send_registrations& regs_;
  std::map<std::uint64_t, flight> flights_;
  // Apart from the core's iowrite tokens.
  std::uint64_t next_token_ = std::uint64_t{1} << 62;
  // The fetch being started: its token and the bytes of it posted so far.
  std::uint64_t head_ = 0;
  std::size_t head_done_ = 0;
};

}  // namespace riomesh::actors
