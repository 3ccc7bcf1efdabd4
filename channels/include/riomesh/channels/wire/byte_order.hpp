// Byte order of structures that one side writes into the other's memory:
// target SGEs and iomap entries travel in the *destination* host's order.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace riomesh::wire {

enum class byte_order : std::uint8_t { little, big };

inline constexpr byte_order host_order() {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return byte_order::big;
#else
  return byte_order::little;
#endif
}

template <class T>
void store(unsigned char* out, T value, byte_order order) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    std::size_t shift = order == byte_order::little ? i : sizeof(T) - 1 - i;
    out[i] = static_cast<unsigned char>(value >> (8 * shift));
  }
}

template <class T>
T load(const unsigned char* in, byte_order order) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    std::size_t shift = order == byte_order::little ? i : sizeof(T) - 1 - i;
    value |= static_cast<T>(static_cast<T>(in[i]) << (8 * shift));
  }
  return value;
}

// riomesh's own layouts (tcp frames, envelopes, handshake, session terms)
// are little-endian whatever the host.
template <class T>
void append_le(std::vector<unsigned char>& out, T value) {
  auto at = out.size();
  out.resize(at + sizeof(T));
  store(out.data() + at, value, byte_order::little);
}

template <class T>
T load_le(const unsigned char* in) {
  return load<T>(in, byte_order::little);
}

}  // namespace riomesh::wire
