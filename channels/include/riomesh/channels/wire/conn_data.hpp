// struct rs_conn_data: the 40 bytes of private data in the connect request
// and reply. Every multi-byte field is big-endian, whatever the hosts are.
#pragma once

#include <riomesh/channels/wire/byte_order.hpp>
#include <riomesh/channels/wire/constants.hpp>
#include <riomesh/channels/wire/sge.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace riomesh::wire {

struct conn_data {
  std::uint8_t version = protocol_version;
  std::uint8_t flags = 0;
  std::uint16_t credits = 0;           // the sender's rq_size
  std::uint8_t target_iomap_size = 0;  // scale-encoded slot count
  sge target_sgl;                      // length = slot count (2), not bytes
  sge data_buf;                        // length = half the receive buffer

  byte_order order() const {
    return (flags & flag_big_endian) ? byte_order::big : byte_order::little;
  }
  bool operator==(const conn_data& o) const {
    return version == o.version && flags == o.flags && credits == o.credits &&
           target_iomap_size == o.target_iomap_size && target_sgl == o.target_sgl &&
           data_buf == o.data_buf;
  }
};

std::array<unsigned char, conn_data_size> encode(const conn_data& value);

// Reads the first 40 bytes (IB pads private data to 56 or 196 bytes). Fails
// with a message on short input or a version other than 1.
std::variant<conn_data, std::string> decode_conn_data(const unsigned char* data,
                                                      std::size_t length);

}  // namespace riomesh::wire
