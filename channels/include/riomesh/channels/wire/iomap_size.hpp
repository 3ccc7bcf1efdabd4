// The 8-bit "scale" encoding of an iomap slot count in the private data:
// 0..128 exactly, then multiples of 256 up to 32512.
#pragma once

#include <cstdint>

namespace riomesh::wire {

std::uint8_t encode_iomap_size(std::uint32_t slots);  // rounds down, as rsockets does
std::uint32_t decode_iomap_size(std::uint8_t encoded);
// True if `slots` survives encode/decode unchanged.
bool iomap_size_exact(std::uint32_t slots);

}  // namespace riomesh::wire
