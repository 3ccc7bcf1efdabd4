// Deterministic test bytes: both ends of a connection generate the same
// sequence from a seed, so the receiver checks every byte without a copy of
// what was sent.
#pragma once

#include <cstddef>
#include <cstdint>

namespace riomesh::test {

class pattern {
 public:
  explicit pattern(std::uint64_t seed) : state_(seed) {}
  unsigned char next() {
    if (left_ == 0) {
      std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      word_ = z ^ (z >> 31);
      left_ = 8;
    }
    auto b = static_cast<unsigned char>(word_);
    word_ >>= 8;
    --left_;
    return b;
  }
  void fill(unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      p[i] = next();
  }
  // Index of the first byte that differs, or n.
  std::size_t check(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] != next())
        return i;
    return n;
  }

 private:
  std::uint64_t state_, word_ = 0;
  int left_ = 0;
};

inline std::uint64_t checksum(const unsigned char* p, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace riomesh::test
