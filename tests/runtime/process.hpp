// A runtime_peer child process: started, awaited until it listens, killed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::test {

// Environment variables for the runtime_peer children started in its scope
// (RUNTIME_PEER_*: peer_main.cpp reads them).
struct child_env {
  using vars = std::vector<std::pair<std::string, std::string>>;
  explicit child_env(vars v);
  ~child_env();
  vars set;
};

class peer_process {
 public:
  // Runs runtime_peer with `args`; waits (up to 30 s) for "ready PORT".
  // With `log_path`, its stderr (the node's log) goes to that file.
  explicit peer_process(const std::vector<std::string>& args, const std::string& log_path = {});
  // Another program with the same protocol ("ready PORT", stdin closing).
  peer_process(const std::string& program, const std::vector<std::string>& args,
               const std::string& log_path);
  ~peer_process();
  peer_process(const peer_process&) = delete;
  peer_process& operator=(const peer_process&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool started() const { return port_ != 0; }
  void kill9();
  // Its next whole line of output (without the newline); "" if none came
  // within `limit` (a part read so far is kept for the next call).
  std::string read_line(std::chrono::milliseconds limit);
  // Closes its stdin (it stops cleanly) and waits up to `limit`; the exit
  // status. One that has not exited by then is killed (SIGKILL), said so on
  // stderr, and its status is 128 + SIGKILL: a test fails on it instead of
  // hanging its suite until the suite's own timeout.
  int stop(std::chrono::seconds limit = std::chrono::seconds(120));
  // Resident set size in bytes, from /proc.
  std::uint64_t rss() const;
  // CPU time it has used so far (user and system, all threads), from /proc.
  double cpu_seconds() const;
  // What it has logged so far (with a log_path), or "".
  std::string log() const;
  // Waits until its log contains `text`; false after `limit`.
  bool wait_log(const std::string& text, std::chrono::milliseconds limit) const;

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::uint16_t port_ = 0;
  std::string log_path_;
  std::string partial_;
};

}  // namespace riomesh::test
