#include <riomesh/actors/envelope/envelope.hpp>

namespace riomesh::actors {
namespace {

template <class T>
void put(std::vector<unsigned char>& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<unsigned char>(static_cast<std::uint64_t>(v) >> (8 * i)));
}

}  // namespace

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
  }
  return "unknown";
}

std::size_t encoded_size(const envelope& e) {
  return wire_envelope::header_size + e.buffers.size() * wire_envelope::descriptor_size +
         e.body.size();
}

void encode(const envelope& e, std::vector<unsigned char>& out) {
  out.reserve(out.size() + encoded_size(e));
  put<std::uint32_t>(out, wire_envelope::magic);
  put<std::uint8_t>(out, wire_envelope::version);
  put<std::uint8_t>(out, static_cast<std::uint8_t>(e.kind));
  put<std::uint16_t>(out, static_cast<std::uint16_t>(e.buffers.size()));
  put<std::uint64_t>(out, e.sender);
  put<std::uint64_t>(out, e.receiver);
  put<std::uint64_t>(out, e.request_id);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(e.body.size()));
  put<std::uint32_t>(out, 0);
  for (const auto& b : e.buffers) {
    put<std::uint64_t>(out, b.offset);
    put<std::uint64_t>(out, b.length);
  }
  out.insert(out.end(), e.body.begin(), e.body.end());
}

}  // namespace riomesh::actors
