#include "arguments.hpp"

#include <riomesh/config/units.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace riomesh::cli {

std::uint64_t count_arg(const config::command_line& cmd, const std::string& name,
                        std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi) {
  if (!cmd.has(name))
    return fallback;
  auto text = cmd.get(name);
  auto expected =
      "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw usage_error(name + " " + text + ": " + expected);
  if (text.size() > 19 || std::stoull(text) < lo || std::stoull(text) > hi)
    throw usage_error(name + " " + text + ": out of range; " + expected);
  return std::stoull(text);
}

std::chrono::nanoseconds duration_arg(const config::command_line& cmd, const std::string& name,
                                      const std::string& fallback, std::chrono::nanoseconds hi) {
  auto text = cmd.get(name, fallback);
  if (!text.empty() && text[0] == '-')
    throw usage_error(name + " " + text + ": a negative duration; expected one such as 500ms");
  auto d = config::parse_duration(text);
  if (!d)
    throw usage_error(name + " " + text +
                      ": not a duration; expected a number with a unit (us, ms, s, min), such "
                      "as 500ms");
  if (d->count() == 0)
    throw usage_error(name + " " + text + ": must be longer than 0");
  if (*d > hi)
    throw usage_error(name + " " + text + ": longer than the most, " + config::format_duration(hi));
  return *d;
}

std::string read_secret_file(const std::string& option, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw usage_error(option + " " + path + ": cannot read it: " + std::strerror(errno));
  std::string s;
  char chunk[256];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0)
    s.append(chunk, n);
  std::fclose(f);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  if (s.empty())
    throw usage_error(option + " " + path + ": the file is empty");
  return s;
}

}  // namespace riomesh::cli
