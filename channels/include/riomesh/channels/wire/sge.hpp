// struct rs_sge (16 bytes: addr, key, length) and struct rs_iomap (24 bytes:
// offset, then an rs_sge without its padding: addr, key, length).
#pragma once

#include <riomesh/channels/wire/byte_order.hpp>

#include <cstdint>

namespace riomesh::wire {

struct sge {
  std::uint64_t addr = 0;
  std::uint32_t key = 0;
  std::uint32_t length = 0;
  bool operator==(const sge& o) const {
    return addr == o.addr && key == o.key && length == o.length;
  }
};

struct iomap_entry {
  std::uint64_t offset = 0;
  sge target;
  bool operator==(const iomap_entry& o) const { return offset == o.offset && target == o.target; }
  // An unwritten (all-zero) slot never matches.
  bool contains(std::uint64_t at) const {
    return target.length != 0 && at >= offset && at - offset < target.length;
  }
};

// `out` must hold sge_size (16) / iomap_entry_size (24) bytes.
void encode(const sge& value, unsigned char* out, byte_order order);
sge decode_sge(const unsigned char* in, byte_order order);
void encode(const iomap_entry& value, unsigned char* out, byte_order order);
iomap_entry decode_iomap_entry(const unsigned char* in, byte_order order);

}  // namespace riomesh::wire
