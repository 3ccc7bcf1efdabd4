// The contract suite's peer: this same program started again in peer mode,
// here (a fresh exec, not a fork: verbs state belongs to the process that
// opened it) or, with RIOMESH_CONTRACT_REMOTE=DIR, on another host, by
// tests/twohost/contract_split.sh watching DIR, a folder both hosts see.
//
// The folder's protocol, one peer N at a time or several:
//   N.job   written by the test: the peer's spec, a newline, where to connect
//   N.kill  made by the test: the runner kills peer N (SIGKILL)
//   N.exit  written by the runner: peer N's exit code (128 + signal if killed)
//   done    made by the test when it ends: the runner stops
#pragma once

#include <sys/types.h>

#include <string>

namespace riomesh::test {

class contract_peer {
 public:
  // Starts the peer that runs `spec` and connects to `where`.
  static contract_peer start(const std::string& spec, const std::string& where);
  // The folder of a remote run, or empty.
  static std::string remote_folder();
  // Tells a remote runner that no more peers will come.
  static void finish_remote();

  contract_peer() = default;
  contract_peer(contract_peer&& o) noexcept;
  contract_peer& operator=(contract_peer&&) = delete;
  ~contract_peer();

  void kill();  // SIGKILL, here or there
  // Its exit code, 128 + signal if killed, 124 if a remote one never ended.
  int wait();

 private:
  pid_t pid_ = -1;      // here
  std::string remote_;  // there: the folder's path and N, without suffix
};

}  // namespace riomesh::test
