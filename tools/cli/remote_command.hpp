// `riomesh ping NODE` and `riomesh stat NODE`: the CLI joins the cluster for
// a moment as a node of its own and asks NODE's admin actor (admin.hpp).
#pragma once

#include <riomesh/config/command_line.hpp>

namespace riomesh::cli {

extern const char* const remote_usage;
extern const std::set<std::string> remote_options;

int ping_command(const config::command_line& cmd);
int stat_command(const config::command_line& cmd);

}  // namespace riomesh::cli
