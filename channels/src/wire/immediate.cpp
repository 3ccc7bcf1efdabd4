#include <riomesh/channels/wire/constants.hpp>
#include <riomesh/channels/wire/immediate.hpp>

#include <arpa/inet.h>

namespace riomesh::wire {

std::optional<std::uint32_t> encode(immediate value) {
  if (value.data > max_data_length)
    return std::nullopt;
  return (static_cast<std::uint32_t>(value.code) << 29) | value.data;
}

immediate decode(std::uint32_t value) {
  return {static_cast<op>(value >> 29), value & max_data_length};
}

std::uint32_t to_wire(std::uint32_t host_value) {
  return htonl(host_value);
}
std::uint32_t from_wire(std::uint32_t wire_value) {
  return ntohl(wire_value);
}

const char* to_string(op value) {
  switch (value) {
    case op::data:
      return "DATA";
    case op::write:
      return "WRITE";
    case op::sgl:
      return "SGL";
    case op::iomap_sgl:
      return "IOMAP_SGL";
    case op::ctrl:
      return "CTRL";
    default:
      return "reserved";
  }
}

}  // namespace riomesh::wire
