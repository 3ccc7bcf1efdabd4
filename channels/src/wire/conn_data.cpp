#include <riomesh/channels/wire/conn_data.hpp>

namespace riomesh::wire {

std::array<unsigned char, conn_data_size> encode(const conn_data& value) {
  std::array<unsigned char, conn_data_size> out{};
  out[0] = value.version;
  out[1] = value.flags;
  store(&out[2], value.credits, byte_order::big);
  // out[4..6] reserved, zero
  out[7] = value.target_iomap_size;
  encode(value.target_sgl, &out[8], byte_order::big);
  encode(value.data_buf, &out[24], byte_order::big);
  return out;
}

std::variant<conn_data, std::string> decode_conn_data(const unsigned char* data,
                                                      std::size_t length) {
  if (!data || length < conn_data_size)
    return "connection data has " + std::to_string(length) + " bytes; at least " +
           std::to_string(conn_data_size) + " are needed";
  conn_data out;
  out.version = data[0];
  if (out.version != protocol_version)
    return "connection data has protocol version " + std::to_string(out.version) +
           "; only version 1 is spoken";
  out.flags = data[1];
  out.credits = load<std::uint16_t>(&data[2], byte_order::big);
  out.target_iomap_size = data[7];
  out.target_sgl = decode_sge(&data[8], byte_order::big);
  out.data_buf = decode_sge(&data[24], byte_order::big);
  return out;
}

}  // namespace riomesh::wire
