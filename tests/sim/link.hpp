// Two rsocket engines joined by some fabric, driven step by step by a test:
// the simulated fabric (pair.hpp) for deterministic runs, real verbs in the
// VM (tests/property/verbs_link.hpp) for the same scenarios on hardware.
#pragma once

#include <riomesh/channels/engine/engine.hpp>

#include <string>
#include <vector>

namespace riomesh::sim {

class guarded_buffer;

struct side_config {
  engine::params params;
  std::size_t recv_ring = 128 * 1024;
  std::size_t send_ring = 128 * 1024;
};

class engine_link {
 public:
  virtual ~engine_link() = default;

  virtual engine::engine& eng(int i) = 0;
  // Exchanges the connection data and starts both engines. With `stagger`,
  // side 0's first writes land before side 1 starts (simulated fabric only).
  virtual bool connect(bool stagger) = 0;
  // Posts side i's pending work.
  virtual void flush(int i) = 0;
  // Feeds up to `max` of side i's completions to its engine, then flushes.
  virtual std::size_t poll(int i, std::size_t max) = 0;
  // Events side i's engine reported since the last call.
  virtual std::vector<engine::event> events(int i) = 0;
  // `remote`: the peer may write it and read it.
  virtual engine::region register_buffer(int i, guarded_buffer& buffer, bool remote) = 0;
  virtual void deregister(int i, std::uint32_t lkey) = 0;

  // Moves one write across: the simulated network's step. Real hardware
  // moves data on its own, and its runs are bounded by time, not steps.
  virtual bool step() = 0;
  virtual bool real_time() const = 0;
  virtual bool can_cut() const = 0;
  virtual void cut(const std::string& why) = 0;
  virtual std::size_t pending_completions(int i) const = 0;
  // A queue the engine on side i overflowed, as the fabric saw it, or empty.
  virtual std::string violation(int i) const = 0;
  // Writes from side i the peer's memory refused.
  virtual std::uint64_t remote_access_errors(int i) const = 0;
  // The engines' own buffers untouched outside their bounds.
  virtual bool guards_intact() const = 0;
};

}  // namespace riomesh::sim
