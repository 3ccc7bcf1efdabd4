#include <riomesh/errc.hpp>

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace riomesh {

const char* to_string(errc e) {
  switch (e) {
    case errc::unknown_node:
      return "unknown_node";
    case errc::not_connected:
      return "not_connected";
    case errc::not_published:
      return "not_published";
    case errc::interface_mismatch:
      return "interface_mismatch";
    case errc::encode_failure:
      return "encode_failure";
    case errc::decode_failure:
      return "decode_failure";
    case errc::node_lost:
      return "node_lost";
    case errc::actor_exited:
      return "actor_exited";
    case errc::congested:
      return "congested";
    case errc::too_large:
      return "too_large";
    case errc::stopped:
      return "stopped";
    case errc::timeout:
      return "timeout";
    case errc::not_mapped:
      return "not_mapped";
    case errc::refused:
      return "refused";
  }
  return "unknown error";
}

caf::atom_value error_category() {
  return caf::atom("riomesh");
}

caf::error make_error(errc e, std::string context) {
  return caf::error{static_cast<std::uint8_t>(e), error_category(),
                    caf::make_message(std::move(context))};
}

bool is(const caf::error& err, errc e) {
  return err.category() == error_category() && err.code() == static_cast<std::uint8_t>(e);
}

std::string render_error(std::uint8_t code, caf::atom_value, const caf::message& context) {
  std::string out = "riomesh: ";
  out += to_string(static_cast<errc>(code));
  if (context.match_elements<std::string>() && !context.get_as<std::string>(0).empty())
    out += " (" + context.get_as<std::string>(0) + ")";
  return out;
}

}  // namespace riomesh
