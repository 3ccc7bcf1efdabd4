// Per-run overrides of a few settings, from the command line or environment.
// Precedence: file < environment < command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace riomesh::config {

struct override_value {
  std::string text;
  std::string source;  // "--listen" or "RIOMESH_LISTEN": named in errors
};

// Any key of the node file for one run: "channel.peer_timeout=15s".
struct setting_override {
  std::string path;  // section.key
  override_value value;
};

struct overrides {
  std::optional<override_value> listen;
  std::optional<override_value> fabric;
  std::optional<override_value> log_level;
  // In order: a later one for the same key wins.
  std::vector<setting_override> settings;

  // Reads RIOMESH_LISTEN, RIOMESH_FABRIC, RIOMESH_LOG_LEVEL and
  // RIOMESH_SETTINGS (KEY=VALUE items separated by ';').
  static overrides from_environment();
  // Values set in `other` replace ours.
  void merge(const overrides& other);
  // "section.key=value[;...]" from `source`; an item without '=' throws
  // std::invalid_argument naming it.
  void add_settings(const std::string& items, const std::string& source);
};

}  // namespace riomesh::config
