// Renders settings back as YAML: what `riomesh config show` prints, and a
// file that loads to the same settings.
#pragma once

#include <riomesh/config/settings.hpp>

#include <string>

namespace riomesh::config {

std::string to_yaml(const settings& value);

}  // namespace riomesh::config
