// The receiver's side of a rendezvous: a message whose buffers were lent
// (envelope::lent) waits until each is fetched into memory this node
// chose, and every message behind it on the connection waits too, so the
// application gets a connection's messages in the order they were sent.
//
// Fetches start at the receiver's pace: at most `window` bytes fetched or
// being fetched and not yet given back by the application (one larger
// buffer alone), so a receiver that falls behind holds at most that much
// of one peer's lent buffers, as its arena bounds what is placed. What a peer can make us hold is
// bounded: past max_held messages or max_held_bytes of inline bodies, hold() refuses and the
// connection ends with the reason.
#pragma once

#include <riomesh/actors/connection/inbound_message.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

class fetch_order {
 public:
  struct limits {
    std::uint64_t window = 64ull << 20;
    std::size_t max_held = 65536;
    std::uint64_t max_held_bytes = 256ull << 20;
  };
  // One lent buffer to fetch: placed[index] of the message `ticket`.
  struct job {
    std::uint64_t ticket = 0;
    std::size_t index = 0;
    std::uint64_t offset = 0, length = 0;  // the sender's map of it
    std::uint64_t receiver = 0;            // the actor it goes to
  };
  explicit fetch_order(const limits& l) : limits_(l) {}

  // Nothing waits: a message without lent buffers may go straight on.
  bool idle() const { return held_.empty(); }
  // `m` waits, with its lent buffers (placeholders in m.placed at `lent`)
  // to fetch. False, with `error`, beyond the limits.
  bool hold(inbound_message&& m, const std::vector<std::size_t>& lent, std::string& error);
  // The next fetch to start, if the window allows one now.
  std::optional<job> next();
  // Whether next() has any job to give (window aside).
  bool pending() const { return !todo_.empty(); }
  // A job started that could not go now: next() gives it again first.
  void retry(const job& j);
  // A job's bytes are in `into`; false if no such job was started.
  bool landed(const job& j, buffer into);
  // The application let go of this many fetched bytes.
  void give_back(std::uint64_t bytes) { taken_ -= std::min(taken_, bytes); }
  // The messages now complete at the front, in order, appended to `out`.
  void take_ready(std::vector<inbound_message>& out);
  std::uint64_t taken() const { return taken_; }
  std::size_t held() const { return held_.size(); }

 private:
  struct waiting {
    inbound_message m;
    std::uint64_t ticket = 0;
    std::vector<std::size_t> missing;  // indices of m.placed not fetched yet
  };
  limits limits_;
  std::deque<waiting> held_;
  std::deque<job> todo_;
  std::uint64_t next_ticket_ = 1;
  std::uint64_t taken_ = 0;       // fetched or being fetched, not given back
  std::size_t started_ = 0;       // jobs started, not landed
  std::uint64_t held_bytes_ = 0;  // inline bodies held
};

}  // namespace riomesh::actors
