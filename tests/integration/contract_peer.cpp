#include "contract_peer.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace riomesh::test {
namespace {

using namespace std::chrono_literals;

// Whole or not at all: the runner must never read half a job.
void write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out)
      throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp);
}

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

}  // namespace

std::string contract_peer::remote_folder() {
  const char* d = std::getenv("RIOMESH_CONTRACT_REMOTE");
  return d ? d : "";
}

void contract_peer::finish_remote() {
  if (auto dir = remote_folder(); !dir.empty())
    write_file(dir + "/done", "");
}

contract_peer contract_peer::start(const std::string& spec, const std::string& where) {
  contract_peer p;
  if (auto dir = remote_folder(); !dir.empty()) {
    static int next = 0;
    p.remote_ = dir + "/" + std::to_string(++next);
    write_file(p.remote_ + ".job", spec + "\n" + where + "\n");
    return p;
  }
  std::string peer_env = "RIOMESH_CONTRACT_PEER=" + spec;
  std::string where_env = "RIOMESH_CONTRACT_AT=" + where;
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    env.push_back(*e);
  env.push_back(peer_env.data());
  env.push_back(where_env.data());
  env.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  if (::posix_spawn(&p.pid_, self, nullptr, nullptr, argv, env.data()) != 0)
    throw std::runtime_error("cannot start the peer process");
  return p;
}

contract_peer::contract_peer(contract_peer&& o) noexcept
    : pid_(o.pid_), remote_(std::move(o.remote_)) {
  o.pid_ = -1;
  o.remote_.clear();
}

contract_peer::~contract_peer() {
  if (pid_ > 0 || !remote_.empty()) {
    kill();
    wait();
  }
}

void contract_peer::kill() {
  if (pid_ > 0)
    ::kill(pid_, SIGKILL);
  else if (!remote_.empty() && !exists(remote_ + ".exit"))
    write_file(remote_ + ".kill", "");
}

int contract_peer::wait() {
  if (pid_ > 0) {
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  if (remote_.empty())
    return -1;
  std::string exit_file = remote_ + ".exit";
  int code = 124;
  for (auto until = std::chrono::steady_clock::now() + 120s;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(10ms))
    if (std::ifstream in(exit_file); in) {
      if (int c = 0; in >> c)
        code = c;
      break;
    }
  remote_.clear();
  return code;
}

}  // namespace riomesh::test
