// Two connection cores over a channel pair, driven by hand: the helpers
// the connection tests share.
#pragma once

#include <riomesh/actors/connection/core_drive.hpp>
#include "channel_pair.hpp"
#include "core_messages.hpp"

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
    actors::drive_core(*p.a, a);
    actors::drive_core(*p.b, b);
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

// Drives both channels and `c` (over `ch`, one of them) alone (the other
// side is written to by hand, or done) until `c` closes or 10 s pass.
inline bool until_closed(linked_channels& p, channels::channel& ch, connection_core& c) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!c.closed() && std::chrono::steady_clock::now() < end) {
    p.a->progress();
    p.b->progress();
    actors::drive_core(ch, c);
  }
  return c.closed();
}

}  // namespace riomesh::test
