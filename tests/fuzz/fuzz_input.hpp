// Reading a fuzzer's bytes as a script: numbers and chunks taken from the
// front, zeros once they run out, so every input is a valid script.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace riomesh::fuzz {

class input {
 public:
  input(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}

  bool empty() const { return n_ == 0; }
  std::size_t left() const { return n_; }

  template <class T>
  T take() {
    T v{};
    std::size_t k = n_ < sizeof v ? n_ : sizeof v;
    std::memcpy(&v, p_, k);
    p_ += k, n_ -= k;
    return v;
  }
  // Up to `max` bytes from the front.
  std::size_t chunk(const std::uint8_t*& out, std::size_t max) {
    std::size_t k = n_ < max ? n_ : max;
    out = p_;
    p_ += k, n_ -= k;
    return k;
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

}  // namespace riomesh::fuzz
