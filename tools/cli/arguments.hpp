// The riomesh command's arguments, checked before anything touches the
// network: a bad one is a usage error (exit 2) naming the argument and what
// it should be.
#pragma once

#include <riomesh/config/command_line.hpp>
#include <riomesh/config/settings.hpp>

#include <chrono>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

namespace riomesh::cli {

class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One subcommand: its name, the lines `riomesh --help` and `riomesh NAME
// --help` show, the options it takes, and what it does.
struct command {
  const char* name;
  const char* usage;
  std::set<std::string> valued, flags;
  int (*run)(const config::command_line&);
};

// --NAME N: a whole number in [lo, hi]; `fallback` when absent.
std::uint64_t count_arg(const config::command_line& cmd, const std::string& name,
                        std::uint64_t fallback, std::uint64_t lo, std::uint64_t hi);
// --NAME DURATION: longer than 0 and at most `hi`.
std::chrono::nanoseconds duration_arg(const config::command_line& cmd, const std::string& name,
                                      const std::string& fallback,
                                      std::chrono::nanoseconds hi = std::chrono::hours(1));
// A secret file's contents, trailing newlines dropped; usage_error with the
// OS's reason when it cannot be read.
std::string read_secret_file(const std::string& option, const std::string& path);

}  // namespace riomesh::cli
