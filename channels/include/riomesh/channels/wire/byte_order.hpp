// Byte order of structures that one side writes into the other's memory:
// target SGEs and iomap entries travel in the *destination* host's order.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
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

// Integers only. One copy and, for the other order, one byte swap: the
// compiler makes each a single load or store.
template <class T>
T swap_bytes(T value) {
  static_assert(std::is_integral<T>::value, "integers only");
  using U = std::make_unsigned_t<T>;
  auto u = static_cast<U>(value);
  if constexpr (sizeof(T) == 2)
    u = __builtin_bswap16(u);
  else if constexpr (sizeof(T) == 4)
    u = __builtin_bswap32(u);
  else if constexpr (sizeof(T) == 8)
    u = __builtin_bswap64(u);
  return static_cast<T>(u);
}

template <class T>
void store(unsigned char* out, T value, byte_order order) {
  if (order != host_order())
    value = swap_bytes(value);
  std::memcpy(out, &value, sizeof(T));
}

template <class T>
T load(const unsigned char* in, byte_order order) {
  T value;
  std::memcpy(&value, in, sizeof(T));
  return order == host_order() ? value : swap_bytes(value);
}

// riomesh's own layouts (tcp frames, envelopes, handshake, session terms)
// are little-endian whatever the host.
template <class T>
void append_le(std::vector<unsigned char>& out, T value) {
  unsigned char bytes[sizeof(T)];
  store(bytes, value, byte_order::little);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <class T>
void store_le(unsigned char* out, T value) {
  store(out, value, byte_order::little);
}

template <class T>
T load_le(const unsigned char* in) {
  return load<T>(in, byte_order::little);
}

}  // namespace riomesh::wire
