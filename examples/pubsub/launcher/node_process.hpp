// One node of the cluster as a child process: its output read line by
// line without blocking, killed or stopped on request, reaped once.
#pragma once

#include <string>
#include <vector>

namespace pubsub::launch {

class node_process {
 public:
  node_process(std::string name, std::vector<std::string> argv);
  ~node_process();
  node_process(const node_process&) = delete;
  node_process& operator=(const node_process&) = delete;

  void start();  // throws std::runtime_error if it cannot fork or exec
  // Complete lines written since the last call (stdout and stderr merged).
  std::vector<std::string> read_lines();
  int fd() const { return out_; }
  void signal(int sig);
  // Reaps the process if it has ended; true once it has.
  bool reap();
  bool running() const { return pid_ > 0 && !ended_; }
  // "exit 0", "exit 1", "killed by signal 9"
  std::string how_ended() const;
  int exit_code() const { return code_; }
  int pid() const { return pid_; }
  const std::string& name() const { return name_; }
  int restarts = 0;

 private:
  std::string name_;
  std::vector<std::string> argv_;
  int pid_ = -1, out_ = -1, code_ = -1, signal_ = 0;
  bool ended_ = false;
  std::string partial_;
};

}  // namespace pubsub::launch
