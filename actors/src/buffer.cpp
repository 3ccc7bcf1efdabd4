#include <riomesh/buffer.hpp>
#include <riomesh/channels/memory/invalidation_bus.hpp>

#include <cstring>

namespace riomesh {

buffer::storage::~storage() {
  if (release)
    release();
}

buffer buffer::heap(std::size_t size) {
  buffer b;
  if (size == 0)
    return b;
  b.s_ = std::make_shared<storage>();
  b.s_->owned.reset(new unsigned char[size]);
  b.s_->data = b.s_->owned.get();
  b.s_->size = size;
  b.s_->where = origin::copy;
  return b;
}

buffer buffer::copy_of(const void* data, std::size_t size) {
  buffer b = heap(size);
  if (size > 0)
    std::memcpy(b.data(), data, size);
  return b;
}

buffer buffer::wrap(void* data, std::size_t size, std::function<void()> release) {
  // Connections may have registered this memory to send from: they forget
  // it before the user gets it back (invalidation_bus.hpp).
  return adopt(static_cast<unsigned char*>(data), size, origin::user,
               [data, size, release = std::move(release)] {
                 channels::invalidation_bus::global().publish(data, size);
                 if (release)
                   release();
               });
}

buffer buffer::adopt(unsigned char* data, std::size_t size, origin where,
                     std::function<void()> release) {
  return adopt(data, size, where, std::move(release), home{});
}

buffer buffer::adopt(unsigned char* data, std::size_t size, origin where,
                     std::function<void()> release, home block) {
  buffer b;
  b.s_ = std::make_shared<storage>();
  b.s_->data = data;
  b.s_->size = size;
  b.s_->where = where;
  b.s_->release = std::move(release);
  b.s_->block = std::move(block);
  return b;
}

buffer buffer::slice(std::size_t offset, std::size_t length) const {
  if (length == 0 || !s_)
    return {};
  if (gathered())
    return slice_pieces(offset, length);
  auto whole = s_;
  return adopt(
      s_->data + offset, length, s_->where, [whole] {}, s_->block);
}

const char* to_string(buffer::origin o) {
  switch (o) {
    case buffer::origin::none:
      return "none";
    case buffer::origin::copy:
      return "copy";
    case buffer::origin::user:
      return "user";
    case buffer::origin::pool:
      return "pool";
    case buffer::origin::arena:
      return "arena";
    case buffer::origin::gathered:
      return "gathered";
  }
  return "unknown";
}

}  // namespace riomesh
