// Messages for connection cores in tests: seeded buffers whose every byte
// the receiver checks, and a small message around them.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/buffer.hpp>

#include <cstddef>
#include <vector>

namespace riomesh::test {

inline buffer pattern(std::size_t n, unsigned seed) {
  auto b = buffer::heap(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>(seed * 31 + i * 7);
  return b;
}

inline bool matches(const buffer& b, std::size_t n, unsigned seed) {
  if (b.size() != n)
    return false;
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != static_cast<unsigned char>(seed * 31 + i * 7))
      return false;
  return true;
}

inline actors::outbound_message message(unsigned seq, std::vector<buffer> placed = {}) {
  actors::outbound_message m;
  m.env.kind = actors::envelope_kind::message;
  m.env.sender = 1;
  m.env.receiver = 2;
  m.env.request_id = seq;
  m.env.body = {static_cast<unsigned char>(seq), 0xaa};
  m.placed = std::move(placed);
  return m;
}

}  // namespace riomesh::test
