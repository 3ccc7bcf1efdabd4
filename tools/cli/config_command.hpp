// `riomesh config check FILE` and `riomesh config show FILE`.
#pragma once

#include <riomesh/config/command_line.hpp>

namespace riomesh::cli {

extern const char* const config_usage;

// Returns the process exit code: 0 ok, 1 configuration rejected; a bad
// command line throws usage_error.
int config_command(const config::command_line& cmd);

}  // namespace riomesh::cli
