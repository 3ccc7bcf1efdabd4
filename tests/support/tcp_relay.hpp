// A man in the middle for tests: it accepts tcp connections, one at a time,
// connects each to `to`, and relays both ways, keeping what it saw of the
// dialers' streams and, if asked, flipping one bit of them on the way.
#pragma once

#include <riomesh/config/settings.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace riomesh::test {

class tcp_relay {
 public:
  // `flip_at`: the index, in the dialer's stream, of the byte to change.
  explicit tcp_relay(config::endpoint to, std::optional<std::size_t> flip_at = std::nullopt);
  ~tcp_relay();
  tcp_relay(const tcp_relay&) = delete;
  tcp_relay& operator=(const tcp_relay&) = delete;

  // Where the dialer connects instead of `to`.
  config::endpoint at() const { return {"127.0.0.1", port_}; }
  // What the dialer sent, as it left the relay (after any flip).
  std::vector<unsigned char> seen() const;

 private:
  void run();
  void relay(int in, int out);

  config::endpoint to_;
  std::optional<std::size_t> flip_at_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex lock_;
  std::vector<unsigned char> seen_;
  std::thread thread_;
};

}  // namespace riomesh::test
