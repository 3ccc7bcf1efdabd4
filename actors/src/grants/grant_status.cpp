#include <riomesh/grant.hpp>

namespace riomesh {

std::string to_string(grant_status s) {
  switch (s) {
    case grant_status::ok:
      return "ok";
    case grant_status::remote_error:
      return "remote_error";
    case grant_status::revoked:
      return "revoked";
    case grant_status::dropped:
      return "dropped";
    case grant_status::out_of_range:
      return "out_of_range";
    case grant_status::refused:
      return "refused";
  }
  return "grant_status(" + std::to_string(static_cast<int>(s)) + ")";
}

bool grant_status_known(std::uint8_t code) {
  return code <= static_cast<std::uint8_t>(grant_status::refused);
}

}  // namespace riomesh
