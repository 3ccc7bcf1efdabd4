// The envelope: how one actor message travels between riomesh nodes on a
// channel's stream. A fixed header, then the descriptors of the large
// buffers the message carries (each already placed by iowrite into the
// receiver's arena, ahead of the envelope), then the body (the message
// itself, serialized, with small buffers inline).
//
//   header (40 bytes, little-endian)
//     u32 magic "RMEV"   u8 version   u8 kind   u16 descriptor count
//     u64 sender         u64 receiver  u64 request id
//     u32 body length    u32 flags (1: the body is placed, as the last
//                        buffer: one too large to go inline; body length 0;
//                        2: lent, some buffers stay in the sender's memory
//                        for the receiver to fetch, by rendezvous)
//   descriptors: u64 arena offset, u64 length, each (for a lent buffer:
//                the offset of the sender's map of it, from lent_from on)
//   body: body length bytes
//
// Both ends are riomesh, so the layout is ours; rsocket peers never see it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace riomesh::actors {

enum class envelope_kind : std::uint8_t {
  message = 1,  // one-way
  request = 2,  // expects a response or an error with the same request id
  response = 3,
  error = 4,    // a request failed: the body says why
  release = 5,  // no body: the descriptors are arena ranges given back
  // The directory's own traffic (no descriptors):
  resolve = 6,   // body: a published name; request id: the asker's
  resolved = 7,  // sender: the actor's id, 0 if none; body: its typed interface
  down = 8,      // sender: an actor the peer knows has exited; body: why
  // Part of a buffer too large for the arena (buffer_stream.hpp): one
  // descriptor; body: u32 index in the coming message, u64 total size.
  piece = 9,
  // No buffers, no body: the sender is stopping and sends nothing more. What
  // tells a peer that stopped from one that was killed, on tcp, where both
  // end the stream the same way.
  farewell = 10,
  // Actor handles across nodes (no descriptors):
  // receiver: an actor of ours the peer now holds a proxy of; keep it alive
  // while the peer is connected and send a down when it exits (at once if
  // it has).
  watch = 11,
  // receiver: an actor of ours; sender: the peer's actor that linked to it
  // (unlink: that ended the link). We link them through a proxy, so either
  // one's exit reaches the other as an exit message.
  link = 12,
  unlink = 13,
  // request id: the asker's; body: node ids (u32 process id, 20 bytes host
  // id, each) the asker met in handles from us and does not know.
  node_query = 14,
  // request id: the query's; body: per node id asked, u8 known, then (if
  // known) u8 name length, name, u8 host length, host, u16 port.
  node_info = 15,
  // Remote memory grants (grants/grant_wire.hpp), no descriptors: a use of
  // a grant (receiver: the grant's id; request id: the holder's operation)
  // and the owner's answer to it (request id: that operation; receiver: an
  // atomic's old value).
  grant_use = 16,
  grant_status = 17,
  // receiver: an actor of ours the sender was handed; body: the name of the
  // node it handed it on to, which may then address it and link to it.
  introduce = 18,
  // The receive arena's size, agreed as it changes (placement/arena_moves):
  // no buffers; body: u8 step, u64 a, u64 b.
  arena = 19,
};
const char* to_string(envelope_kind k);

struct arena_ref {
  std::uint64_t offset = 0, length = 0;
  bool operator==(const arena_ref& o) const { return offset == o.offset && length == o.length; }
};

struct envelope {
  envelope_kind kind = envelope_kind::message;
  std::uint64_t sender = 0;    // actor id on the sending node
  std::uint64_t receiver = 0;  // actor id on the receiving node
  std::uint64_t request_id = 0;
  std::vector<arena_ref> buffers;
  std::vector<unsigned char> body;
  std::uint32_t flags = 0;
  static constexpr std::uint32_t body_placed = 1;
  static constexpr std::uint32_t lent = 2;
};

namespace wire_envelope {
constexpr std::uint32_t magic = 0x56454d52;  // "RMEV" as little-endian bytes
constexpr std::uint8_t version = 1;
constexpr std::size_t header_size = 40;
constexpr std::size_t descriptor_size = 16;
// Arena space is handed out in whole granules: two descriptors of one
// envelope never share one.
constexpr std::uint64_t granule = 64;
// A lent buffer's descriptor names the sender's loan of it, in [lent_from,
// lent_end): apart from every arena and from the application's maps. From
// lent_pushed_from on, it is not mapped for reading: the receiver asks for
// it to be pushed even where it reads one-sided.
constexpr std::uint64_t lent_from = std::uint64_t{1} << 61;
constexpr std::uint64_t lent_pushed_from = lent_from + (std::uint64_t{1} << 60);
constexpr std::uint64_t lent_end = std::uint64_t{1} << 62;
}  // namespace wire_envelope

namespace wire_arena_step {
constexpr std::size_t body_size = 17;  // u8 step, u64 a, u64 b
}

// Appends the envelope's bytes to `out`.
void encode(const envelope& e, std::vector<unsigned char>& out);
std::size_t encoded_size(const envelope& e);

}  // namespace riomesh::actors
