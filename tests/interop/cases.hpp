// The rsocket interop cases, each a conversation between two roles:
//   ordering  writer / reader   riowrite into a map, then a stream record
//                               announcing it, with stream filler between;
//                               the reader checks the placed bytes as each
//                               record arrives (RC ordering, end to end)
//   maps      writer / reader   four maps at scattered offsets, written in
//                               pieces; one unmapped and replaced; a write
//                               to an unmapped offset refused
//   shutdown  first / second    first sends and shuts down writing; second
//                               reads to end of stream, answers, shuts down
//   late      shutter / answerer the shutter sends, shuts down writing and
//                               sends again (librdmacm lets it); the
//                               answerer drops or takes the late bytes,
//                               but answers in full, and the shutter must
//                               read every byte of the answer
//   close     streamer / closer the closer leaves mid-transfer (close, or
//                               exit without closing: "vanish"); the
//                               streamer must see the error, not hang
//   unmapped  mapper / writer   the mapper withdraws its map and says so;
//                               the writer's blocking riowrite there must
//                               return (no mapping, or the connection's
//                               end), not wait for ever
//   edge      mapper / writer   a write crossing the end of the only entry:
//                               riomesh stops there (no mapping beyond);
//                               a librdmacm v44 writer spins, and the
//                               riomesh mapper must spend no CPU on it
//   eof       sender / poller   the sender shuts down writing; the poller,
//                               having read everything, must find the
//                               socket readable (end of stream), then read 0
#pragma once

#include "peer_api.hpp"

#include <string>

namespace riomesh::interop {

// Iomap slots each side offers its peer.
constexpr int iomap_slots = 8;

// Runs `role` of `name` on a connected peer; false with a message on stderr.
bool run_case(const std::string& name, const std::string& role, peer_api& api);
bool known_case(const std::string& name, const std::string& role);

}  // namespace riomesh::interop
