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

constexpr std::uint64_t step = 0x9e3779b97f4a7c15ull;

std::uint64_t first_word(const std::string& publisher, std::uint64_t seq) {
  return mix(std::hash<std::string>{}(publisher) ^ mix(seq));
}

// Which sample's pattern a word at `offset` carries: the sequence numbers
// near `seq` are tried, as a buffer reused too early holds a neighbour's.
std::string whose_word(std::uint64_t w, std::size_t offset, const std::string& publisher,
                       std::uint64_t seq) {
  if (w == 0)
    return "zeros";
  auto start = w - step * (offset / 8);
  std::uint64_t lo = seq > 1024 ? seq - 1024 : 0;
  for (std::uint64_t k = lo; k < seq + 1024; ++k)
    if (first_word(publisher, k) == start)
      return "seq " + std::to_string(k);
  return "no sample's pattern";
}

}  // namespace

void fill(riomesh::buffer& b, const std::string& publisher, std::uint64_t seq) {
  auto word = first_word(publisher, seq);
  auto* p = b.data();
  std::size_t n = b.size(), i = 0;
  for (; i + 8 <= n; i += 8, word += step)
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

std::string damage(const riomesh::buffer& b, const std::string& publisher, std::uint64_t seq) {
  const auto* p = b.data();
  auto word = first_word(publisher, seq);
  std::size_t n = b.size() / 8 * 8, first = n, last = 0, bad = 0;
  std::uint64_t first_seen = 0;
  for (std::size_t i = 0; i < n; i += 8, word += step) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w == word)
      continue;
    if (first == n) {
      first = i;
      first_seen = w;
    }
    last = i;
    ++bad;
  }
  if (first == n)
    return "payload intact (the checksum sent with it is wrong)";
  return std::to_string(bad * 8) + " of " + std::to_string(b.size()) + " bytes differ, from " +
         std::to_string(first) + " to " + std::to_string(last + 8) + "; the first holds " +
         whose_word(first_seen, first, publisher, seq);
}

}  // namespace pubsub
