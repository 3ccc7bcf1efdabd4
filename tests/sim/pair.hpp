// Two rsocket engines joined by the simulated fabric, with their memory:
// what a channel does with a real fabric, minus the I/O.
#pragma once

#include "fabric.hpp"
#include "link.hpp"

#include <memory>
#include <vector>

namespace riomesh::sim {

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

class engine_pair final : public engine_link {
 public:
  engine_pair(const side_config& a, const side_config& b, std::uint64_t seed,
              std::uint32_t rnr_retry = 7);

  engine::engine& eng(int i) override { return *sides_[i].eng; }
  endpoint& ep(int i) { return net_.side(i); }
  fabric& net() { return net_; }

  // With `stagger`, side 0 starts and its first writes land before side 1
  // starts, as when the passive side of rdma_cm writes before the active
  // side sees ESTABLISHED.
  bool connect(bool stagger = false) override;
  void flush(int i) override;
  std::size_t poll(int i, std::size_t max) override;
  std::vector<engine::event> events(int i) override;
  engine::region register_buffer(int i, guarded_buffer& buffer, bool remote) override;
  void deregister(int i, std::uint32_t lkey) override { net_.side(i).deregister(lkey); }

  // One network event: a write lands, an acknowledgement returns, or the
  // connection manager tells a side that its peer, closed, disconnected.
  bool step() override;
  bool real_time() const override { return false; }
  bool can_cut() const override { return true; }
  void cut(const std::string& why) override { net_.cut(why); }
  std::size_t pending_completions(int i) const override {
    return net_.side(i).pending_completions();
  }
  std::string violation(int i) const override;
  std::uint64_t remote_access_errors(int i) const override {
    return net_.side(i).stats().remote_access_errors;
  }
  bool guards_intact() const override;

 private:
  struct side {
    std::unique_ptr<guarded_buffer> target_list, recv_ring, send_ring;
    std::unique_ptr<engine::engine> eng;
    std::vector<engine::work> work;
    bool disconnected = false;  // rdma_disconnect after its engine closed
  };
  fabric net_;
  side sides_[2];
};

}  // namespace riomesh::sim
