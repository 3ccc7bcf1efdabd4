#include <riomesh/channels/tcp/frame.hpp>
#include <riomesh/channels/wire/byte_order.hpp>

#include <cstdio>

namespace riomesh::channels::tcp {

using wire::byte_order;

std::array<unsigned char, header_size> encode(const frame& f) {
  std::array<unsigned char, header_size> out{};
  out[0] = static_cast<unsigned char>(f.kind);
  out[1] = f.flags;
  wire::store(&out[2], f.reserved, byte_order::little);
  wire::store(&out[4], f.length, byte_order::little);
  wire::store(&out[8], f.offset, byte_order::little);
  wire::store(&out[16], f.extra, byte_order::little);
  return out;
}

frame decode(const unsigned char* h) {
  frame f;
  f.kind = static_cast<frame_kind>(h[0]);
  f.flags = h[1];
  f.reserved = wire::load<std::uint16_t>(&h[2], byte_order::little);
  f.length = wire::load<std::uint32_t>(&h[4], byte_order::little);
  f.offset = wire::load<std::uint64_t>(&h[8], byte_order::little);
  f.extra = wire::load<std::uint64_t>(&h[16], byte_order::little);
  return f;
}

std::string describe(const frame& f) {
  const char* names[] = {"kind 0",  "HELLO",       "DATA",     "IOWRITE",   "IOMAP",
                         "IOUNMAP", "IOUNMAP_ACK", "SHUTDOWN", "KEEPALIVE", "SECURE"};
  auto k = static_cast<unsigned>(f.kind);
  char text[128];
  if (k < sizeof names / sizeof *names)
    std::snprintf(text, sizeof text, "%s offset 0x%llx length %u", names[k],
                  static_cast<unsigned long long>(f.offset), f.length);
  else
    std::snprintf(text, sizeof text, "kind 0x%02x length %u", k, f.length);
  return text;
}

}  // namespace riomesh::channels::tcp
