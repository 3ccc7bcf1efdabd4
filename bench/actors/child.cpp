#include "child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {

child::child(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (::pipe(in) != 0)
    return;
  if (::pipe(out) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return;
  }
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    std::vector<char*> args;
    for (const auto& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  to_ = in[1];
  from_ = ::fdopen(out[0], "r");
  // Its siblings must not hold its stdin open past close_stdin().
  ::fcntl(to_, F_SETFD, FD_CLOEXEC);
  ::fcntl(out[0], F_SETFD, FD_CLOEXEC);
}

child::~child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    std::vector<std::string> rest;
    finish(rest);
  }
}

bool child::next_line(std::string& line) {
  char buf[1024];
  if (!from_ || !std::fgets(buf, sizeof buf, from_))
    return false;
  line = buf;
  while (!line.empty() && line.back() == '\n')
    line.pop_back();
  return true;
}

bool child::await(const std::string& prefix, std::string& rest) {
  std::string line;
  while (next_line(line))
    if (line.rfind(prefix, 0) == 0) {
      rest = line.substr(prefix.size());
      return true;
    }
  return false;
}

void child::say(const std::string& line) {
  auto text = line + "\n";
  if (to_ >= 0 && ::write(to_, text.data(), text.size()) < 0)
    close_stdin();
}

void child::close_stdin() {
  if (to_ >= 0)
    ::close(to_);
  to_ = -1;
}

bool child::finish(std::vector<std::string>& rest) {
  close_stdin();
  std::string line;
  while (next_line(line))
    rest.push_back(line);
  if (from_)
    std::fclose(from_);
  from_ = nullptr;
  int status = 0;
  bool ok = pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0;
  pid_ = -1;
  return ok;
}

}  // namespace bench
