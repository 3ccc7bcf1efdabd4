// `riomesh ping|stat|ls NODE`: the CLI joins the cluster for a moment as a
// node of its own and asks NODE's admin actor (admin.hpp). Every argument
// is checked before it connects.
#pragma once

#include <riomesh/config/command_line.hpp>

#include <set>
#include <string>

namespace riomesh::cli {

extern const char* const ping_usage;
extern const char* const stat_usage;
extern const char* const ls_usage;
extern const char* const target_usage;  // how NODE is found, for all three
extern const std::set<std::string> target_options;

int ping_command(const config::command_line& cmd);
int stat_command(const config::command_line& cmd);
int ls_command(const config::command_line& cmd);

}  // namespace riomesh::cli
