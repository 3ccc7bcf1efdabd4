// Two connection cores over a channel pair, driven by hand: the helpers
// the connection tests share.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include "channel_pair.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>

namespace riomesh::test {

using actors::connection_core;
using actors::outbound_message;

inline connection_core::settings with_arenas(std::uint64_t mine, std::uint64_t peers) {
  connection_core::settings s;
  s.inbound.arena_size = mine;
  s.inbound.max_body = 1 << 16;
  s.peer_arena_size = peers;
  s.releases.delay = std::chrono::microseconds(0);  // report at once: tests stay short
  return s;
}

// Drives both sides until `done` or 10 s.
inline bool run(linked_channels& p, connection_core& a, connection_core& b,
                const std::function<bool()>& done) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    p.a->progress();
    p.b->progress();
    a.pump();
    b.pump();
    if (done())
      return true;
    if (a.closed() || b.closed())
      break;
  }
  MESSAGE("a: " << a.reason() << ", " << a.stats().messages_out << " out, queue "
                << a.stats().queue_depth << "; b: " << b.reason() << ", " << b.stats().messages_in
                << " in");
  return false;
}

// Drives both channels and `c` alone (the other side is written to by
// hand, or done) until `c` closes or 10 s pass.
inline bool until_closed(linked_channels& p, connection_core& c) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!c.closed() && std::chrono::steady_clock::now() < end) {
    p.a->progress();
    p.b->progress();
    c.pump();
  }
  return c.closed();
}

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

inline outbound_message message(unsigned seq, std::vector<buffer> placed) {
  outbound_message m;
  m.env.kind = actors::envelope_kind::message;
  m.env.sender = 1;
  m.env.receiver = 2;
  m.env.request_id = seq;
  m.env.body = {static_cast<unsigned char>(seq), 0xaa};
  m.placed = std::move(placed);
  return m;
}

}  // namespace riomesh::test
