#include "node_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace pubsub::launch {

node_process::node_process(std::string name, std::vector<std::string> argv)
    : name_(std::move(name)), argv_(std::move(argv)) {}

node_process::~node_process() {
  if (running()) {
    signal(SIGKILL);
    while (!reap())
      ::usleep(1000);
  }
  if (out_ >= 0)
    ::close(out_);
}

void node_process::start() {
  if (out_ >= 0)
    ::close(out_);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string{"pipe: "} + std::strerror(errno));
  std::vector<char*> args;
  for (auto& a : argv_)
    args.push_back(a.data());
  args.push_back(nullptr);
  auto launcher = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0)
    throw std::runtime_error(std::string{"fork: "} + std::strerror(errno));
  if (pid_ == 0) {
    // A launcher that dies without stopping its nodes (SIGKILL) still
    // takes them with it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != launcher)  // it died before that took effect
      ::_exit(1);
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  out_ = pipe_fds[0];
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
  ended_ = false;
  code_ = -1;
  signal_ = 0;
  partial_.clear();
}

std::vector<std::string> node_process::read_lines() {
  std::vector<std::string> lines;
  char chunk[4096];
  for (;;) {
    auto n = out_ >= 0 ? ::read(out_, chunk, sizeof chunk) : -1;
    if (n <= 0)
      break;
    partial_.append(chunk, static_cast<std::size_t>(n));
  }
  std::size_t start = 0, end;
  while ((end = partial_.find('\n', start)) != std::string::npos) {
    lines.push_back(partial_.substr(start, end - start));
    start = end + 1;
  }
  partial_.erase(0, start);
  return lines;
}

void node_process::signal(int sig) {
  if (running())
    ::kill(pid_, sig);
}

bool node_process::reap() {
  if (ended_ || pid_ <= 0)
    return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_)
    return false;
  ended_ = true;
  if (WIFEXITED(status))
    code_ = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    signal_ = WTERMSIG(status);
  return true;
}

std::string node_process::how_ended() const {
  if (!ended_)
    return "running";
  return signal_ ? "killed by signal " + std::to_string(signal_) : "exit " + std::to_string(code_);
}

}  // namespace pubsub::launch
