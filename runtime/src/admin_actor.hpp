// The actor behind "riomesh.admin" (admin.hpp).
#pragma once

#include <riomesh/admin.hpp>

#include <caf/fwd.hpp>

#include <string>
#include <vector>

namespace riomesh::detail {

caf::actor spawn_admin(caf::actor_system& sys, caf::actor directory,
                       std::vector<std::pair<std::string, std::string>> facts);

}  // namespace riomesh::detail
