#include <riomesh/channels/wire/iomap_size.hpp>

namespace riomesh::wire {

std::uint8_t encode_iomap_size(std::uint32_t slots) {
  if (slots <= 128)
    return static_cast<std::uint8_t>(slots);
  // Like rsockets: computed wide, truncated to 8 bits (32768 aliases to 128).
  return static_cast<std::uint8_t>(0x80 | (slots >> 8));
}

std::uint32_t decode_iomap_size(std::uint8_t encoded) {
  if (encoded <= 128)
    return encoded;
  return static_cast<std::uint32_t>(encoded & 0x7f) << 8;
}

bool iomap_size_exact(std::uint32_t slots) {
  return decode_iomap_size(encode_iomap_size(slots)) == slots;
}

}  // namespace riomesh::wire
