// A simulated pair of RC queue pairs, for deterministic tests of the rsocket
// engine. Test double only: never built into the libraries, never selectable.
//
// What it models: memory regions with keys, bounds and access; RDMA WRITE,
// READ and 8-byte atomics (fetch-and-add, compare-and-swap on an aligned
// word), and WRITE WITH IMMEDIATE, the latter consuming a posted receive (with none, the
// write is retried up to rnr_retry times, 7 meaning forever, then fails);
// strictly in-order placement and completion per queue pair; a bad key or an
// out-of-bounds write failing with a remote access error that takes the
// requester's QP to the error state and flushes the rest; a cut connection.
// Which side's write lands next, and when its acknowledgement arrives, is
// drawn from a seeded generator: the same seed replays the same run.
#pragma once

#include <riomesh/channels/engine/types.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace riomesh::sim {

struct completion {
  bool is_recv = false;
  engine::send_completion send;
  engine::recv_completion recv;
};

struct endpoint_stats {
  std::uint64_t writes = 0;
  std::uint64_t bytes_placed = 0;
  std::uint64_t rnr_naks = 0;
  std::uint64_t remote_access_errors = 0;
  std::uint64_t violations = 0;  // queue overflows: the engine broke its budget
  std::string last_violation;
};

class fabric;

class endpoint {
 public:
  endpoint(fabric& f, std::uint32_t sq_size, std::uint32_t rq_capacity)
      : fabric_(f), sq_size_(sq_size), rq_capacity_(rq_capacity) {}

  // Registers [base, base + length); remote_write allows the peer to write
  // it, remote_read to read it, remote_atomic to run atomics on it.
  engine::region register_memory(void* base, std::size_t length, bool remote_write,
                                 bool remote_read = false, bool remote_atomic = false);
  void deregister(std::uint32_t lkey);

  void post(const engine::work& w);
  // Takes up to `max` completions, oldest first.
  std::vector<completion> poll(std::size_t max);

  bool in_error() const { return error_; }
  const endpoint_stats& stats() const { return stats_; }
  std::size_t pending_completions() const { return cq_.size(); }
  std::uint32_t receives_posted() const { return receives_; }

 private:
  friend class fabric;
  struct mr {
    unsigned char* base;
    std::size_t length;
    bool remote_write, remote_read, remote_atomic;
  };
  struct wr {
    engine::work work;
    std::uint32_t rnr_attempts = 0;
  };

  const mr* find(std::uint32_t key) const;
  void fail_qp(std::uint64_t wr_id, engine::completion_status why, const std::string& detail);
  void violation(const std::string& what);

  fabric& fabric_;
  std::uint32_t sq_size_;
  std::uint32_t rq_capacity_;
  std::map<std::uint32_t, mr> mrs_;
  std::uint32_t next_key_ = 0x100;
  std::deque<wr> to_execute_;  // posted, not yet placed at the peer
  std::deque<wr> to_ack_;      // placed, acknowledgement not yet back
  std::uint32_t receives_ = 0;
  std::deque<completion> cq_;
  bool error_ = false;
  endpoint_stats stats_;
};

class fabric {
 public:
  fabric(std::uint64_t seed, std::uint32_t sq_size, std::uint32_t rq_capacity,
         std::uint32_t rnr_retry = 7);

  endpoint& side(int i) { return i == 0 ? a_ : b_; }
  const endpoint& side(int i) const { return i == 0 ? a_ : b_; }
  std::mt19937_64& rng() { return rng_; }

  // One network event, drawn at random among those possible: a side's next
  // write lands at its peer, or an acknowledgement comes back. False if none
  // could happen (everything placed and acknowledged, or only RNR waits).
  bool step();
  // Both QPs to the error state; everything outstanding fails.
  void cut(const std::string& why);
  bool is_cut() const { return cut_; }

 private:
  friend class endpoint;
  bool execute(endpoint& from, endpoint& to);
  void ack(endpoint& from);

  std::mt19937_64 rng_;
  std::uint32_t rnr_retry_;
  endpoint a_;
  endpoint b_;
  bool cut_ = false;
};

}  // namespace riomesh::sim
