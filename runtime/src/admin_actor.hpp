// The actor behind "riomesh.admin" (admin.hpp).
#pragma once

#include <riomesh/actors/directory/directory.hpp>
#include <riomesh/admin.hpp>

#include <caf/fwd.hpp>

#include <functional>
#include <string>
#include <vector>

namespace riomesh::detail {

// `published` lists the names published on this node (list_atom).
admin_actor spawn_admin(caf::actor_system& sys, actors::directory_actor directory,
                        std::vector<std::pair<std::string, std::string>> facts,
                        std::function<published_list()> published);

// What a member may ask the admin actor: ping, stat and list. Dialing and
// resolving through the node are control, for its own process and for
// holders of a key cluster.admins names (`admin`). Empty: allowed.
std::string admin_refusal(const caf::message& msg, bool admin);

}  // namespace riomesh::detail
