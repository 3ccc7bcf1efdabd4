// The send-side staging ring: stream bytes are copied here so that the
// caller's buffer is free when send() returns. Space is taken at the head and
// given back at the tail in the same order, because send completions arrive
// in posting order on a reliable connection.
#pragma once

#include <riomesh/channels/engine/types.hpp>

namespace riomesh::engine {

class staging_ring {
 public:
  staging_ring() = default;
  staging_ring(unsigned char* base, std::size_t capacity, std::uint32_t lkey)
      : base_(base), capacity_(capacity), lkey_(lkey) {}

  std::size_t capacity() const { return capacity_; }
  std::size_t available() const { return capacity_ - used_; }

  // Copies `n` (<= available()) bytes in; returns 1 or 2 SGEs (2 on wrap).
  std::uint8_t put(const unsigned char* data, std::size_t n,
                   std::array<local_sge, max_work_sges>& out);
  void release(std::size_t n);

 private:
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint32_t lkey_ = 0;
  std::size_t head_ = 0;
  std::size_t used_ = 0;
};

}  // namespace riomesh::engine
