#include <riomesh/channels/wire/sge.hpp>

namespace riomesh::wire {

void encode(const sge& value, unsigned char* out, byte_order order) {
  store(out, value.addr, order);
  store(out + 8, value.key, order);
  store(out + 12, value.length, order);
}

sge decode_sge(const unsigned char* in, byte_order order) {
  return {load<std::uint64_t>(in, order), load<std::uint32_t>(in + 8, order),
          load<std::uint32_t>(in + 12, order)};
}

void encode(const iomap_entry& value, unsigned char* out, byte_order order) {
  store(out, value.offset, order);
  encode(value.target, out + 8, order);
}

iomap_entry decode_iomap_entry(const unsigned char* in, byte_order order) {
  return {load<std::uint64_t>(in, order), decode_sge(in + 8, order)};
}

}  // namespace riomesh::wire
