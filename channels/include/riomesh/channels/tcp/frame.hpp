// The tcp channel's frames: a fixed 24-byte little-endian header, then the
// payload of DATA and IOWRITE. Nothing here trusts the peer: decode() only
// splits bytes into fields; tcp_protocol checks them against its state.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace riomesh::channels::tcp {

enum class frame_kind : std::uint8_t {
  hello = 1,        // first frame each way: version, magic, and in `length`
                    // how many maps its sender accepts from the receiver
  data = 2,         // `length` stream bytes follow
  iowrite = 3,      // `length` bytes follow, for the receiver's map at `offset`
  iomap = 4,        // the sender mapped [offset, offset + extra) for the receiver;
                    // flag once: to be written once, in order (see below)
  iounmap = 5,      // the sender withdrew its map at `offset`
  iounmap_ack = 6,  // no more iowrites to the receiver's map at `offset` follow
  shutdown = 7,     // the sender sends no more DATA or IOWRITE
  keepalive = 8,
  secure = 9,  // what the sender sends after this frame is in TLS records
};

inline constexpr std::size_t header_size = 24;
inline constexpr std::uint64_t hello_magic = 0x504354314853524dull;  // "MRSH1TCP"
// Version 2: HELLO carries the sender's bound on the receiver's maps.
// Version 3: IOMAP's flag once.
inline constexpr std::uint64_t protocol_version = 3;
// An IOMAP flag: the receiver writes the map once, each IOWRITE where the
// last one ended, from its start. When the last byte is written, the map
// ends on both sides, with no IOUNMAP round; and its owner knows every
// byte of it was written.
inline constexpr std::uint8_t map_once = 1;
// The most maps a HELLO may accept (as rsockets' largest iomap).
inline constexpr std::uint32_t max_maps = 32512;

struct frame {
  frame_kind kind = frame_kind::keepalive;
  std::uint8_t flags = 0;      // IOMAP: map_once; otherwise 0
  std::uint16_t reserved = 0;  // must be 0
  std::uint32_t length = 0;    // payload bytes after the header
  std::uint64_t offset = 0;
  std::uint64_t extra = 0;
};

std::array<unsigned char, header_size> encode(const frame& f);
frame decode(const unsigned char* header);

// "IOWRITE offset 0x1000 length 4096", for error messages.
std::string describe(const frame& f);

}  // namespace riomesh::channels::tcp
