#pragma once

#include <riomesh/config/command_line.hpp>

namespace riomesh::cli {

// Returns the process exit code: 0 ok, 1 configuration rejected, 2 usage.
int config_command(const config::command_line& cmd);

}  // namespace riomesh::cli
