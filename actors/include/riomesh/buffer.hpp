// riomesh::buffer: a copyable, ref-counted handle to bytes, the way large
// data rides in actor messages (CAF 0.17 message elements must be
// copyable; copying a buffer copies the handle, never the bytes). The bytes
// come from the registered pool (runtime::allocate: sent without a copy),
// from the user (wrap), from a copy, or from the arena they were placed in
// on arrival; or the buffer gathers pieces of others (gather). Copies
// share the bytes: fill a buffer before sending it.
//
// Whatever owns the bytes gets them back when the last handle drops, on
// whichever thread drops it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace riomesh {

class buffer {
 public:
  enum class origin : std::uint8_t {
    none,      // the empty buffer
    copy,      // a private copy on the heap
    user,      // the user's memory, given back through its release function
    pool,      // the node's registered pool: sent by RDMA without a copy
    arena,     // placed by a peer into this node's arena on arrival
    gathered,  // pieces of other buffers, in order (gather)
  };

  // The block a buffer's bytes live in, when the runtime can register that
  // block once for many buffers (a pool slab): `keep` holds the block's
  // memory, so a registration of it never outlives the pages it pins.
  struct home {
    const unsigned char* base = nullptr;
    std::size_t length = 0;
    std::shared_ptr<const void> keep;
    int fd = -1;          // a memfd or dma-buf whose offset 0 is `base`
    bool device = false;  // fd is a dma-buf: device memory (memory.provider: dmabuf)
  };

  // A byte container for CAF's type traits, so a bare buffer can be a
  // message element; its inspect (buffer_inspect.hpp) still decides how
  // it is serialized.
  using value_type = unsigned char;

  buffer() = default;
  static buffer copy_of(const void* data, std::size_t size);
  // `size` uninitialized bytes on the heap (origin copy), to fill.
  static buffer heap(std::size_t size);
  static buffer wrap(void* data, std::size_t size, std::function<void()> release);
  // For the runtime: bytes it owns (a pool slab, an arena region), given
  // back by `release`.
  static buffer adopt(unsigned char* data, std::size_t size, origin where,
                      std::function<void()> release);
  static buffer adopt(unsigned char* data, std::size_t size, origin where,
                      std::function<void()> release, home block);

  // Bytes [offset, offset + length) of this buffer, sharing it: the
  // whole stays alive while the slice does. Same origin; a slice of a
  // gathered buffer gathers the slices of the pieces it spans.
  buffer slice(std::size_t offset, std::size_t length) const;

  // Scatter-gather: one buffer made of `pieces` (any sizes, any alignment,
  // any origins; a gathered piece gives its own pieces), without copying
  // them. Sent in a message it is one element that arrives as one
  // contiguous buffer: each piece is written straight from where it lies
  // to its place in the receiver's arena (an RDMA write, or a gathered
  // socket write, per piece), registered piece by piece. Its bytes are not
  // contiguous here: data() is null; read them through pieces(), or
  // flatten() for a contiguous copy. Empty pieces are left out; one piece
  // is that piece itself.
  static buffer gather(std::vector<buffer> pieces);
  bool gathered() const noexcept { return where() == origin::gathered; }
  // The pieces of a gathered buffer; empty for any other.
  const std::vector<buffer>& pieces() const noexcept;
  // The bytes in one contiguous buffer: this one if it is already, else a
  // copy (origin copy).
  buffer flatten() const;

  unsigned char* data() noexcept { return s_ ? s_->data : nullptr; }
  const unsigned char* data() const noexcept { return s_ ? s_->data : nullptr; }
  std::size_t size() const noexcept { return s_ ? s_->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  unsigned char* begin() noexcept { return data(); }
  unsigned char* end() noexcept { return data() + size(); }
  const unsigned char* begin() const noexcept { return data(); }
  const unsigned char* end() const noexcept { return data() + size(); }
  unsigned char& operator[](std::size_t i) { return s_->data[i]; }
  unsigned char operator[](std::size_t i) const { return s_->data[i]; }

  origin where() const noexcept { return s_ ? s_->where : origin::none; }
  // Its home block, or null.
  const home* home_block() const noexcept { return s_ && s_->block.keep ? &s_->block : nullptr; }
  // The memfd holding these bytes and their offset in it, for another
  // local process to map (pool and arena buffers with memory.provider:
  // memfd); nothing otherwise. The descriptor is valid while this buffer
  // lives: dup() it to keep it longer.
  std::optional<std::pair<int, std::uint64_t>> descriptor() const noexcept {
    if (!s_ || s_->block.fd < 0)
      return std::nullopt;
    return std::make_pair(s_->block.fd, static_cast<std::uint64_t>(s_->data - s_->block.base));
  }
  long use_count() const noexcept { return s_.use_count(); }

 private:
  struct storage {
    unsigned char* data = nullptr;
    std::size_t size = 0;
    origin where = origin::none;
    std::function<void()> release;
    std::unique_ptr<unsigned char[]> owned;  // copy_of's bytes
    home block;
    std::vector<buffer> pieces;  // gathered: in order, none empty or gathered
    ~storage();
  };
  buffer slice_pieces(std::size_t offset, std::size_t length) const;
  std::shared_ptr<storage> s_;
};

const char* to_string(buffer::origin o);

}  // namespace riomesh
