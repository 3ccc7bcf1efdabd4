// The per-run overrides every riomesh command accepts, taken from argv.
#pragma once

#include <riomesh/config/overrides.hpp>

#include <string>
#include <vector>

namespace riomesh::cli {

struct command_line {
  std::vector<std::string> positional;
  config::overrides extra;  // environment first, then --listen / --fabric / --log-level
};

// Throws std::invalid_argument naming the bad option.
command_line parse(int argc, char** argv, int first);

extern const char* const override_help;

}  // namespace riomesh::cli
