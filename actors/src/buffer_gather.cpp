// Scatter-gather buffers: one buffer over pieces of others, and the slices
// and copies of them.
#include <riomesh/buffer.hpp>

#include <algorithm>
#include <cstring>

namespace riomesh {

buffer buffer::gather(std::vector<buffer> pieces) {
  std::vector<buffer> flat;
  std::size_t total = 0;
  for (auto& p : pieces) {
    if (p.gathered()) {
      for (const auto& q : p.pieces())
        flat.push_back(q);
    } else if (!p.empty()) {
      flat.push_back(std::move(p));
    }
  }
  if (flat.empty())
    return {};
  if (flat.size() == 1)
    return std::move(flat.front());
  for (const auto& p : flat)
    total += p.size();
  buffer b;
  b.s_ = std::make_shared<storage>();
  b.s_->size = total;
  b.s_->where = origin::gathered;
  b.s_->pieces = std::move(flat);
  return b;
}

const std::vector<buffer>& buffer::pieces() const noexcept {
  static const std::vector<buffer> none;
  return gathered() ? s_->pieces : none;
}

buffer buffer::flatten() const {
  if (!gathered())
    return *this;
  auto out = heap(size());
  std::size_t at = 0;
  for (const auto& p : s_->pieces) {
    std::memcpy(out.data() + at, p.data(), p.size());
    at += p.size();
  }
  return out;
}

// Of a gathered buffer: the parts of its pieces in [offset, offset + length).
buffer buffer::slice_pieces(std::size_t offset, std::size_t length) const {
  std::vector<buffer> parts;
  std::size_t start = 0;
  for (const auto& p : s_->pieces) {
    std::size_t end = start + p.size();
    if (end > offset && start < offset + length) {
      std::size_t from = std::max(offset, start) - start;
      std::size_t to = std::min(offset + length, end) - start;
      parts.push_back(p.slice(from, to - from));
    }
    start = end;
  }
  return gather(std::move(parts));
}

}  // namespace riomesh
