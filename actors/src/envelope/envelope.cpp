#include <riomesh/actors/envelope/envelope.hpp>

#include <riomesh/channels/wire/byte_order.hpp>

namespace riomesh::actors {

const char* to_string(envelope_kind k) {
  switch (k) {
    case envelope_kind::message:
      return "message";
    case envelope_kind::request:
      return "request";
    case envelope_kind::response:
      return "response";
    case envelope_kind::error:
      return "error";
    case envelope_kind::release:
      return "release";
    case envelope_kind::resolve:
      return "resolve";
    case envelope_kind::resolved:
      return "resolved";
    case envelope_kind::down:
      return "down";
    case envelope_kind::piece:
      return "piece";
    case envelope_kind::farewell:
      return "farewell";
    case envelope_kind::watch:
      return "watch";
    case envelope_kind::link:
      return "link";
    case envelope_kind::unlink:
      return "unlink";
    case envelope_kind::node_query:
      return "node query";
    case envelope_kind::grant_use:
      return "grant use";
    case envelope_kind::grant_status:
      return "grant status";
    case envelope_kind::node_info:
      return "node info";
    case envelope_kind::introduce:
      return "introduce";
  }
  return "unknown";
}

std::size_t encoded_size(const envelope& e) {
  return wire_envelope::header_size + e.buffers.size() * wire_envelope::descriptor_size +
         e.body.size();
}

void encode(const envelope& e, std::vector<unsigned char>& out) {
  out.reserve(out.size() + encoded_size(e));
  wire::append_le<std::uint32_t>(out, wire_envelope::magic);
  wire::append_le<std::uint8_t>(out, wire_envelope::version);
  wire::append_le<std::uint8_t>(out, static_cast<std::uint8_t>(e.kind));
  wire::append_le<std::uint16_t>(out, static_cast<std::uint16_t>(e.buffers.size()));
  wire::append_le<std::uint64_t>(out, e.sender);
  wire::append_le<std::uint64_t>(out, e.receiver);
  wire::append_le<std::uint64_t>(out, e.request_id);
  wire::append_le<std::uint32_t>(out, static_cast<std::uint32_t>(e.body.size()));
  wire::append_le<std::uint32_t>(out, e.flags);
  for (const auto& b : e.buffers) {
    wire::append_le<std::uint64_t>(out, b.offset);
    wire::append_le<std::uint64_t>(out, b.length);
  }
  out.insert(out.end(), e.body.begin(), e.body.end());
}

}  // namespace riomesh::actors
