// Requests this node's actors sent through proxies, until their answer
// (or failure) comes: each has a wire id the peer echoes back, and counts
// only from the peer it went to (pending_table.hpp), and its round trip
// goes into the latency histogram. One lock of its own, held for the
// table alone: what is taken is answered or failed outside it.
#pragma once

#include <riomesh/actors/requests/latency_recorder.hpp>
#include <riomesh/actors/requests/pending_table.hpp>

#include <caf/actor_control_block.hpp>
#include <caf/message_id.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

struct request_wait {
  caf::strong_actor_ptr requester;
  caf::message_id mid;
  caf::strong_actor_ptr proxy;  // what it was sent through
  std::chrono::steady_clock::time_point sent;
};

class request_table {
 public:
  using clock = std::chrono::steady_clock;

  // The wire id of the new wait on `peer`.
  std::uint64_t add(const std::string& peer, request_wait w) {
    std::lock_guard<std::mutex> guard(lock_);
    return waits_.add(peer, std::move(w));
  }
  // `peer` answered request `id` at `now`: the wait, its round trip
  // recorded; nothing if none waits (answered, failed, another peer's).
  std::optional<request_wait> answered(const std::string& peer, std::uint64_t id,
                                       clock::time_point now) {
    auto w = take(peer, id);
    if (w)
      latency_.record(now - w->sent);
    return w;
  }
  // The wait, taken unanswered (its message could not be sent).
  std::optional<request_wait> take(const std::string& peer, std::uint64_t id) {
    std::lock_guard<std::mutex> guard(lock_);
    return waits_.take(peer, id);
  }
  // The peer is lost: every wait on it.
  std::vector<request_wait> take_all(const std::string& peer) {
    std::lock_guard<std::mutex> guard(lock_);
    return waits_.take_all(peer);
  }
  std::vector<request_wait> take_all() {
    std::lock_guard<std::mutex> guard(lock_);
    return waits_.take_all();
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> guard(lock_);
    return waits_.size();
  }
  latency_histogram latency() const { return latency_.snapshot(); }

 private:
  mutable std::mutex lock_;
  pending_table<request_wait> waits_;
  latency_recorder latency_;  // lock-free
};

}  // namespace riomesh::actors
