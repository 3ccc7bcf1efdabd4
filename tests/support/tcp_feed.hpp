// Moving bytes between tcp protocol objects without sockets, the way a
// socket and its shell would.
#pragma once

#include <riomesh/channels/tcp/tcp_protocol.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace riomesh::test {

using channels::tcp::tcp_protocol;

// Moves everything `from` wants to write into `to`, the way a socket would,
// in pieces of at most `chunk` bytes.
inline void pump(tcp_protocol& from, tcp_protocol& to, std::size_t chunk = 1 << 20) {
  iovec iov[64];
  while (from.wants_write()) {
    std::size_t n = from.write_iov(iov, 64);
    std::vector<unsigned char> bytes;
    for (std::size_t i = 0; i < n && bytes.size() < chunk; ++i) {
      auto* p = static_cast<unsigned char*>(iov[i].iov_base);
      bytes.insert(bytes.end(), p, p + std::min(iov[i].iov_len, chunk - bytes.size()));
    }
    std::size_t fed = 0;
    while (fed < bytes.size()) {
      auto [at, room] = to.read_target();
      if (room == 0)
        break;
      std::size_t k = std::min(room, bytes.size() - fed);
      std::memcpy(at, bytes.data() + fed, k);
      to.on_read(k);
      fed += k;
    }
    from.on_written(fed);
    if (fed < bytes.size())
      return;  // the receiver is full
  }
}

// Feeds raw bytes into a protocol as if they came from its socket, through
// read_targets() as the socket shell does (a payload's end and the next
// header in one read, or what the protocol reads ahead). Returns the
// number of reads it took.
inline std::size_t feed(tcp_protocol& to, const std::vector<unsigned char>& bytes) {
  std::size_t fed = 0, reads = 0;
  while (fed < bytes.size()) {
    iovec iov[2];
    std::size_t parts = to.read_targets(iov);
    if (parts == 0)
      return reads;
    std::size_t k = 0;
    for (std::size_t i = 0; i < parts && fed + k < bytes.size(); ++i) {
      std::size_t n = std::min(iov[i].iov_len, bytes.size() - fed - k);
      std::memcpy(iov[i].iov_base, bytes.data() + fed + k, n);
      k += n;
    }
    to.on_read(k);
    fed += k;
    ++reads;
  }
  return reads;
}

}  // namespace riomesh::test
