#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>

#include <atomic>
#include <cstdio>

namespace riomesh::logging {
namespace {
std::atomic<int> threshold{static_cast<int>(config::log_level::info)};
}

void set_level(config::log_level level) {
  threshold = static_cast<int>(level);
}

bool enabled(config::log_level level) {
  return level != config::log_level::off && static_cast<int>(level) >= threshold.load();
}

void write(config::log_level level, const std::string& node, const std::string& text) {
  if (!enabled(level))
    return;
  // Escaped whole: peers' names and reasons are in the text, and a log
  // line must stay one line of plain characters whatever they hold.
  std::string line = "riomesh[" + config::printable(node) + "] " + config::to_string(level) +
                     ": " + config::printable(text) + "\n";
  // One fwrite: stdio locks the stream for the call.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace riomesh::logging
