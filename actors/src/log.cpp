#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace riomesh::logging {
namespace {

std::atomic<int> threshold{static_cast<int>(config::log_level::info)};
std::atomic<bool> as_json{false};

// Printable already (config::printable): only quotes and backslashes left.
std::string json_string(const std::string& printable) {
  std::string out = "\"";
  for (char c : printable) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

// UTC, to the millisecond: what log collectors parse without a format.
std::string now_utc() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return text;
}

}  // namespace

void set_level(config::log_level level) {
  threshold = static_cast<int>(level);
}

void set_format(config::log_format format) {
  as_json = format == config::log_format::json;
}

bool enabled(config::log_level level) {
  return level != config::log_level::off && static_cast<int>(level) >= threshold.load();
}

void write(config::log_level level, const std::string& node, const record& r) {
  if (!enabled(level))
    return;
  // Escaped whole: peers' names and reasons are in the text, and a log
  // line must stay one line of plain characters whatever they hold.
  std::string line;
  if (as_json) {
    line = "{\"time\":\"" + now_utc() + "\",\"level\":\"" + config::to_string(level) +
           "\",\"node\":" + json_string(config::printable(node)) +
           ",\"event\":" + json_string(config::printable(r.event.empty() ? "log" : r.event));
    if (!r.peer.empty())
      line += ",\"peer\":" + json_string(config::printable(r.peer));
    if (!r.fields.empty()) {
      line += ",\"fields\":{";
      for (std::size_t i = 0; i < r.fields.size(); ++i) {
        const auto& [key, v] = r.fields[i];
        line += (i ? "," : "") + json_string(config::printable(key)) + ":";
        if (auto* n = std::get_if<std::uint64_t>(&v))
          line += std::to_string(*n);
        else
          line += json_string(config::printable(std::get<std::string>(v)));
      }
      line += "}";
    }
    line += ",\"message\":" + json_string(config::printable(r.message)) + "}\n";
  } else {
    line = "riomesh[" + config::printable(node) + "] " + config::to_string(level) + ": " +
           config::printable(r.message) + "\n";
  }
  // One fwrite: stdio locks the stream for the call.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void write(config::log_level level, const std::string& node, const std::string& text) {
  write(level, node, record{"log", "", {}, text});
}

}  // namespace riomesh::logging
