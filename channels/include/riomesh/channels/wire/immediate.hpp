// The 32-bit immediate of every RDMA WRITE WITH IMMEDIATE: op in bits 31..29,
// data in bits 28..0. Values here are in host order; verbs puts them on the
// wire big-endian (to_wire / from_wire).
#pragma once

#include <cstdint>
#include <optional>

namespace riomesh::wire {

enum class op : std::uint8_t {
  data = 0,            // data = payload bytes
  reserved_data1 = 1,  // never sent; rsockets would treat it as data
  write = 2,           // riowrite's plain WRITE: never carries an immediate
  reserved_data3 = 3,
  sgl = 4,  // data = the sender's new absolute credit limit (+ a target SGE, if 16 bytes)
  reserved_data5 = 5,
  iomap_sgl = 6,  // data = index of the iomap slot just written
  ctrl = 7,       // data = control code
};

enum class ctrl_code : std::uint32_t { disconnect = 0, keepalive = 1, shutdown = 2 };

struct immediate {
  op code;
  std::uint32_t data;  // 29 bits
  bool operator==(const immediate& o) const { return code == o.code && data == o.data; }
};

// Empty if data does not fit in 29 bits.
std::optional<std::uint32_t> encode(immediate value);
immediate decode(std::uint32_t value);

std::uint32_t to_wire(std::uint32_t host_value);  // big-endian, as ibv_send_wr.imm_data
std::uint32_t from_wire(std::uint32_t wire_value);

const char* to_string(op value);

}  // namespace riomesh::wire
