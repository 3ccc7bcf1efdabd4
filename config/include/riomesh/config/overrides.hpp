// Per-run overrides of a few settings, from the command line or environment.
// Precedence: file < environment < command line.
#pragma once

#include <optional>
#include <string>

namespace riomesh::config {

struct override_value {
  std::string text;
  std::string source;  // "--listen" or "RIOMESH_LISTEN": named in errors
};

struct overrides {
  std::optional<override_value> listen;
  std::optional<override_value> fabric;
  std::optional<override_value> log_level;

  // Reads RIOMESH_LISTEN, RIOMESH_FABRIC and RIOMESH_LOG_LEVEL.
  static overrides from_environment();
  // Values set in `other` replace ours.
  void merge(const overrides& other);
};

}  // namespace riomesh::config
