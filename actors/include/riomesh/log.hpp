// One line per event on stderr, by level: "riomesh[node] warn: text", or
// with the json format one object per line: {"time": "2026-11-27T18:30:
// 01.250Z", "level": "warn", "node": "broker", "event": "peer_lost",
// "peer": "sub-1", "fields": {...}, "message": "..."}, so that a log
// collector filters on the event and the peer without parsing sentences.
// Lines from different threads never interleave, and control characters
// (a peer's name, say) are printed escaped (config::printable).
#pragma once

#include <riomesh/config/settings.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace riomesh::logging {

// A figure of an event: numbers stay numbers in JSON.
using value = std::variant<std::string, std::uint64_t>;

struct record {
  std::string event;  // snake_case kind of event, "peer_lost"
  std::string peer;   // the node it concerns; empty when none
  std::vector<std::pair<std::string, value>> fields;
  std::string message;  // the sentence the text format prints
};

void set_level(config::log_level level);
void set_format(config::log_format format);
bool enabled(config::log_level level);
void write(config::log_level level, const std::string& node, const record& r);
// A record of event "log" with no peer: for embedders' own lines.
void write(config::log_level level, const std::string& node, const std::string& text);

inline void warn(const std::string& node, const record& r) {
  write(config::log_level::warn, node, r);
}
inline void info(const std::string& node, const record& r) {
  write(config::log_level::info, node, r);
}
inline void debug(const std::string& node, const record& r) {
  write(config::log_level::debug, node, r);
}

}  // namespace riomesh::logging
