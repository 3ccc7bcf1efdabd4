// What senders hand a connection: a bounded queue that many threads push
// to and the I/O thread drains, whole, once per wake. push() says whether
// the queue was empty, so the sender rings the doorbell only then: one
// wake-up per batch, not per message.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>

namespace riomesh::actors {

class outbox {
 public:
  enum class pushed { first, more, full, closed };

  // `bound`: messages queued here and in the connection, together.
  explicit outbox(std::size_t bound) : bound_(bound) {}

  // Any thread.
  pushed push(outbound_message&& m);
  // What waits here and in the connection (cheap: for refusals and stats).
  std::size_t depth() const {
    return queued_.load(std::memory_order_relaxed) + backlog_.load(std::memory_order_relaxed);
  }
  std::size_t bound() const { return bound_; }
  // A push was refused as full since the last call: the one that asks
  // tells its senders when the queue has drained.
  bool take_refused() { return refused_.exchange(false); }

  // The I/O thread.
  // Moves everything queued so far to the back of `into`.
  std::size_t take(std::deque<outbound_message>& into);
  // What the connection holds, taken from here but not yet sent.
  void backlog(std::size_t n) { backlog_.store(n, std::memory_order_relaxed); }
  // Nothing more is accepted; what is queued is given to `into` to fail.
  void close(std::deque<outbound_message>& into);

 private:
  std::size_t bound_;
  mutable std::mutex lock_;
  std::deque<outbound_message> queue_;
  std::atomic<std::size_t> queued_{0}, backlog_{0};
  std::atomic<bool> refused_{false};
  bool closed_ = false;
};

}  // namespace riomesh::actors
