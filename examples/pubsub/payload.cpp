#include "payload.hpp"

#include <cstring>
#include <functional>

namespace pubsub {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  return x ^ (x >> 33);
}

}  // namespace

void fill(riomesh::buffer& b, const std::string& publisher, std::uint64_t seq) {
  auto word = mix(std::hash<std::string>{}(publisher) ^ mix(seq));
  auto* p = b.data();
  std::size_t n = b.size(), i = 0;
  for (; i + 8 <= n; i += 8, word += 0x9e3779b97f4a7c15ull)
    std::memcpy(p + i, &word, 8);
  for (; i < n; ++i)
    p[i] = static_cast<unsigned char>(word >> (8 * (i % 8)));
}

std::uint64_t checksum(const riomesh::buffer& b) {
  const auto* p = b.data();
  std::size_t n = b.size(), i = 0;
  std::uint64_t h = 0x243f6a8885a308d3ull ^ n;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ mix(w + i)) * 0x100000001b3ull;
  }
  for (; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return mix(h);
}

}  // namespace pubsub
