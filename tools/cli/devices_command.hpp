// `riomesh devices`: the RDMA devices this machine has, and which one a
// node would use.
#pragma once

#include <riomesh/config/command_line.hpp>

namespace riomesh::cli {

extern const char* const devices_usage;

int devices_command(const config::command_line& cmd);

}  // namespace riomesh::cli
