// One line per event on stderr, by level: "riomesh[node] warn: text", or
// with the json format one object per line: {"time": "2026-11-27T18:30:
// 01.250Z", "level": "warn", "node": "broker", "message": "..."}. Lines
// from different threads never interleave, and control characters in the
// text (a peer's name, say) are printed escaped (config::printable).
#pragma once

#include <riomesh/config/settings.hpp>

#include <string>

namespace riomesh::logging {

void set_level(config::log_level level);
void set_format(config::log_format format);
bool enabled(config::log_level level);
void write(config::log_level level, const std::string& node, const std::string& text);

inline void warn(const std::string& node, const std::string& text) {
  write(config::log_level::warn, node, text);
}
inline void info(const std::string& node, const std::string& text) {
  write(config::log_level::info, node, text);
}
inline void debug(const std::string& node, const std::string& text) {
  write(config::log_level::debug, node, text);
}

}  // namespace riomesh::logging
