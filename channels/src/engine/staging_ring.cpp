#include <riomesh/channels/engine/staging_ring.hpp>

#include <algorithm>
#include <cstring>

namespace riomesh::engine {

std::uint8_t staging_ring::put(const unsigned char* data, std::size_t n,
                               std::array<local_sge, max_work_sges>& out) {
  std::uint8_t pieces = 0;
  while (n > 0) {
    std::size_t run = std::min(n, capacity_ - head_);
    std::memcpy(base_ + head_, data, run);
    out[pieces++] = {reinterpret_cast<std::uint64_t>(base_ + head_),
                     static_cast<std::uint32_t>(run), lkey_};
    head_ = (head_ + run) % capacity_;
    used_ += run;
    data += run;
    n -= run;
  }
  return pieces;
}

void staging_ring::release(std::size_t n) {
  used_ -= std::min(n, used_);
}

}  // namespace riomesh::engine
