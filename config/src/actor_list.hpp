// The `actors:` list of a node file: read with positions, shown by print.
#pragma once

#include "reader.hpp"

#include <riomesh/config/settings.hpp>

namespace riomesh::config::detail {

void read_actor_list(const value_ref& v, settings& s);
YAML::Node show_actor_list(const settings& s);

}  // namespace riomesh::config::detail
