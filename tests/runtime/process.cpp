#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

extern char** environ;

namespace riomesh::test {

child_env::child_env(vars v) : set(std::move(v)) {
  for (auto& [k, value] : set)
    ::setenv(k.c_str(), value.c_str(), 1);
}

child_env::~child_env() {
  for (auto& [k, value] : set)
    ::unsetenv(k.c_str());
}

peer_process::peer_process(const std::vector<std::string>& args, const std::string& log_path)
    : peer_process(RIOMESH_BINARY_DIR "/tests/runtime/runtime_peer", args, log_path) {}

peer_process::peer_process(const std::string& program, const std::vector<std::string>& args,
                           const std::string& log_path)
    : log_path_(log_path) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0)
    return;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
  if (!log_path.empty())
    posix_spawn_file_actions_addopen(&fa, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string exe = program;
  std::vector<char*> argv{exe.data()};
  std::vector<std::string> copy = args;
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  if (::posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ) != 0)
    pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
  ::close(to_child[0]);
  ::close(from_child[1]);
  in_ = to_child[1];
  out_ = from_child[0];
  std::istringstream is(pid_ > 0 ? read_line(std::chrono::seconds(60)) : "");
  std::string word;
  unsigned port = 0;
  if (is >> word >> port && word == "ready")
    port_ = static_cast<std::uint16_t>(port);
}

peer_process::~peer_process() {
  if (pid_ > 0)
    kill9();
  if (in_ >= 0)
    ::close(in_);
  if (out_ >= 0)
    ::close(out_);
}

std::string peer_process::read_line(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  do {
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0)
      continue;
    char c;
    if (::read(out_, &c, 1) != 1)
      break;  // its end
    if (c == '\n') {
      std::string line;
      line.swap(partial_);
      return line;
    }
    partial_ += c;
  } while (std::chrono::steady_clock::now() < deadline);
  return {};
}

void peer_process::kill9() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int peer_process::stop(std::chrono::seconds limit) {
  if (pid_ <= 0)
    return -1;
  ::close(in_);
  in_ = -1;
  int st = 0;
  auto deadline = std::chrono::steady_clock::now() + limit;
  pid_t done = 0;
  while ((done = ::waitpid(pid_, &st, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    ::usleep(10000);
  if (done == 0) {
    std::fprintf(stderr, "peer process %d had not exited %lld s after its input closed: killed\n",
                 static_cast<int>(pid_), static_cast<long long>(limit.count()));
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
  }
  pid_ = -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::uint64_t peer_process::rss() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

double peer_process::cpu_seconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string line;
  std::getline(in, line);
  // The command name may hold spaces: fields are counted after its ')'.
  auto close = line.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  for (int field = 3; field < 14; ++field)
    fields >> skip;
  unsigned long long user = 0, system = 0;
  fields >> user >> system;
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string peer_process::log() const {
  if (log_path_.empty())
    return {};
  std::ifstream in(log_path_);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

bool peer_process::wait_log(const std::string& text, std::chrono::milliseconds limit) const {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (log().find(text) != std::string::npos)
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    ::usleep(20000);
  }
}

}  // namespace riomesh::test
