#include <riomesh/actors/placement/arena_steps.hpp>

#include <riomesh/channels/wire/byte_order.hpp>

namespace riomesh::actors {

envelope encode_step(const arena_step& s) {
  envelope e;
  e.kind = envelope_kind::arena;
  e.body.push_back(static_cast<unsigned char>(s.what));
  wire::append_le<std::uint64_t>(e.body, s.a);
  wire::append_le<std::uint64_t>(e.body, s.b);
  return e;
}

std::optional<arena_step> decode_step(const envelope& e, std::string& error) {
  if (e.body.size() != wire_arena_step::body_size) {
    error = "an arena step of " + std::to_string(e.body.size()) + " bytes";
    return std::nullopt;
  }
  auto k = e.body[0];
  if (k < 1 || k > 7) {
    error = "an arena step of unknown kind " + std::to_string(k);
    return std::nullopt;
  }
  arena_step s;
  s.what = static_cast<arena_step::kind>(k);
  s.a = wire::load_le<std::uint64_t>(e.body.data() + 1);
  s.b = wire::load_le<std::uint64_t>(e.body.data() + 9);
  return s;
}

}  // namespace riomesh::actors
