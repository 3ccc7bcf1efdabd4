#include <riomesh/config/overrides.hpp>

#include <cstdlib>
#include <stdexcept>

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
  if (auto items = from_env("RIOMESH_SETTINGS"))
    out.add_settings(items->text, items->source);
  return out;
}

void overrides::add_settings(const std::string& items, const std::string& source) {
  std::size_t from = 0;
  while (from <= items.size()) {
    auto end = items.find(';', from);
    if (end == std::string::npos)
      end = items.size();
    auto item = items.substr(from, end - from);
    from = end + 1;
    auto first = item.find_first_not_of(' ');
    if (first == std::string::npos)
      continue;
    item = item.substr(first, item.find_last_not_of(' ') - first + 1);
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(source + ": '" + item + "' is not SECTION.KEY=VALUE");
    settings.push_back({item.substr(0, eq), {item.substr(eq + 1), source + " " + item}});
  }
}

void overrides::merge(const overrides& other) {
  if (other.listen)
    listen = other.listen;
  if (other.fabric)
    fabric = other.fabric;
  if (other.log_level)
    log_level = other.log_level;
  settings.insert(settings.end(), other.settings.begin(), other.settings.end());
}

}  // namespace riomesh::config
