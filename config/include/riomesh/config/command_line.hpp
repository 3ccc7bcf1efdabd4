// A riomesh program's command line: the per-run overrides every program
// accepts (--listen, --fabric, --log-level, and their environment
// variables), the program's own options, and the positional words.
#pragma once

#include <riomesh/config/overrides.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace riomesh::config {

struct command_line {
  std::vector<std::string> positional;
  overrides extra;  // environment first, then --listen / --fabric / --log-level
  std::map<std::string, std::string> options;  // the program's own: "--count" -> "3"
  bool has(const std::string& option) const { return options.count(option) != 0; }
  std::string get(const std::string& option, const std::string& fallback = {}) const {
    auto it = options.find(option);
    return it == options.end() ? fallback : it->second;
  }
};

// `valued` options take a value (--config FILE or --config=FILE), `flags`
// do not. Throws std::invalid_argument naming an unknown or incomplete option.
command_line parse_command_line(int argc, char** argv, int first,
                                const std::set<std::string>& valued = {},
                                const std::set<std::string>& flags = {});

// The help lines of the overrides.
extern const char* const override_help;

}  // namespace riomesh::config
