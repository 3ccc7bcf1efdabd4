// Two rsocket engines joined by the simulated fabric, with their memory:
// what a channel does with a real fabric, minus the I/O.
#pragma once

#include "fabric.hpp"

#include <riomesh/channels/engine/engine.hpp>

#include <memory>
#include <vector>

namespace riomesh::sim {

struct side_config {
  engine::params params;
  std::size_t recv_ring = 128 * 1024;
  std::size_t send_ring = 128 * 1024;
};

// Host memory with guard bytes on both sides; only the middle is registered,
// so a write outside it shows as changed guard bytes.
class guarded_buffer {
 public:
  static constexpr std::size_t guard = 64;
  static constexpr unsigned char pattern = 0xa5;
  explicit guarded_buffer(std::size_t length);
  unsigned char* data() { return bytes_.data() + guard; }
  std::size_t size() const { return bytes_.size() - 2 * guard; }
  bool guards_intact() const;

 private:
  std::vector<unsigned char> bytes_;
};

class engine_pair {
 public:
  engine_pair(const side_config& a, const side_config& b, std::uint64_t seed,
              std::uint32_t rnr_retry = 7);

  engine::engine& eng(int i) { return *sides_[i].eng; }
  endpoint& ep(int i) { return net_.side(i); }
  fabric& net() { return net_; }

  // Exchanges the connection data and starts both engines. With `stagger`,
  // side 0 starts and its first writes land before side 1 starts, as when the
  // passive side of rdma_cm writes before the active side sees ESTABLISHED.
  bool connect(bool stagger = false);
  // Posts side i's pending work to the fabric.
  void flush(int i);
  // Feeds up to `max` of side i's completions to its engine, then flushes.
  std::size_t poll(int i, std::size_t max);
  // Events side i's engine reported since the last call.
  std::vector<engine::event> events(int i);
  // Registers a guarded buffer on side i.
  engine::region register_buffer(int i, guarded_buffer& buffer, bool remote_write);
  bool guards_intact() const;

 private:
  struct side {
    std::unique_ptr<guarded_buffer> target_list, recv_ring, send_ring;
    std::unique_ptr<engine::engine> eng;
    std::vector<engine::work> work;
  };
  fabric net_;
  side sides_[2];
};

}  // namespace riomesh::sim
