#include <riomesh/config/overrides.hpp>

#include <cstdlib>

namespace riomesh::config {
namespace {

std::optional<override_value> from_env(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text)
    return std::nullopt;
  return override_value{text, std::string{"environment "} + name};
}

}  // namespace

overrides overrides::from_environment() {
  overrides out;
  out.listen = from_env("RIOMESH_LISTEN");
  out.fabric = from_env("RIOMESH_FABRIC");
  out.log_level = from_env("RIOMESH_LOG_LEVEL");
  return out;
}

void overrides::merge(const overrides& other) {
  if (other.listen)
    listen = other.listen;
  if (other.fabric)
    fabric = other.fabric;
  if (other.log_level)
    log_level = other.log_level;
}

}  // namespace riomesh::config
