#include <riomesh/actors/envelope/envelope.hpp>

#include <riomesh/channels/wire/byte_order.hpp>

#include <cstring>

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
    case envelope_kind::arena:
      return "arena";
  }
  return "unknown";
}

std::size_t encoded_size(const envelope& e) {
  return wire_envelope::header_size + e.buffers.size() * wire_envelope::descriptor_size +
         e.body.size();
}

// Sized once and written in place: an envelope is encoded per message.
void encode(const envelope& e, std::vector<unsigned char>& out) {
  auto at = out.size();
  out.resize(at + encoded_size(e));
  auto* p = out.data() + at;
  auto put = [&p](auto value) {
    wire::store_le(p, value);
    p += sizeof(value);
  };
  put(wire_envelope::magic);
  put(wire_envelope::version);
  put(static_cast<std::uint8_t>(e.kind));
  put(static_cast<std::uint16_t>(e.buffers.size()));
  put(e.sender);
  put(e.receiver);
  put(e.request_id);
  put(static_cast<std::uint32_t>(e.body.size()));
  put(e.flags);
  for (const auto& b : e.buffers) {
    put(b.offset);
    put(b.length);
  }
  if (!e.body.empty())
    std::memcpy(p, e.body.data(), e.body.size());
}

}  // namespace riomesh::actors
