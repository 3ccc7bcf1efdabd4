// A runtime_peer child process: started, awaited until it listens, killed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace riomesh::test {

class peer_process {
 public:
  // Runs runtime_peer with `args`; waits (up to 30 s) for "ready PORT".
  explicit peer_process(const std::vector<std::string>& args);
  ~peer_process();
  peer_process(const peer_process&) = delete;
  peer_process& operator=(const peer_process&) = delete;

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool started() const { return port_ != 0; }
  void kill9();
  // Closes its stdin (it stops cleanly) and waits; the exit status.
  int stop();
  // Resident set size in bytes, from /proc.
  std::uint64_t rss() const;

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace riomesh::test
