#include "remote.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace bench {
namespace {

// The command's words on one line, split by the unit separator: no
// quoting to get wrong, and no word of ours holds one.
constexpr char separator = '\x1f';

const char* servers_at() {
  const char* v = std::getenv("ACTOR_BENCH_SERVERS_AT");
  return v && *v ? v : nullptr;
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    auto w = ::write(fd, p, n);
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// What the agent runs, and nothing else: a server of this bench, or one
// of the rdma tools, optionally under env (the bench's own ACTOR_BENCH_*
// settings) and timeout. Whoever reaches the port gets no shell.
bool allowed(const std::vector<std::string>& words, const std::string& self) {
  std::size_t i = 0;
  if (i < words.size() && words[i] == "/usr/bin/env")
    for (++i; i < words.size() && words[i].rfind("ACTOR_BENCH_", 0) == 0; ++i) {
    }
  if (i + 1 < words.size() && words[i] == "/usr/bin/timeout")
    i += 2;
  if (i >= words.size())
    return false;
  if (words[i] == self)
    return i + 1 < words.size() && words[i + 1] == "serve";
  for (const char* tool : {"rstream", "riostream", "ib_write_bw", "ib_write_lat"})
    if (words[i] == tool)
      return true;
  return false;
}

// Runs the command the connection names, as the connection's own process.
[[noreturn]] void serve_connection(int fd, const std::string& self) {
  constexpr std::size_t max_line = 4096;  // a command line of ours is far shorter
  std::string line;
  char c = 0;
  while (line.size() < max_line && ::read(fd, &c, 1) == 1 && c != '\n')
    line += c;
  if (line.empty())  // a probe of whether the agent is up
    ::_exit(0);
  std::vector<std::string> words;
  std::size_t start = 0;
  for (std::size_t at; (at = line.find(separator, start)) != std::string::npos; start = at + 1)
    words.push_back(line.substr(start, at - start));
  words.push_back(line.substr(start));
  if (line.size() >= max_line || !allowed(words, self)) {
    std::fprintf(stderr, "actor_bench agent: refused a command that is none of the bench's\n");
    ::_exit(126);
  }
  std::vector<char*> args;
  for (auto& w : words)
    args.push_back(w.data());
  args.push_back(nullptr);
  ::dup2(fd, 0);
  ::dup2(fd, 1);
  ::close(fd);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "actor_bench agent: cannot run %s\n", args[0]);
  ::_exit(127);
}

}  // namespace

int agent(const std::string& address, int port, const std::string& self) {
  ::signal(SIGCHLD, SIG_IGN);  // commands are reaped as they end
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) {
    std::fprintf(stderr, "actor_bench agent: '%s' is not an IPv4 address\n", address.c_str());
    return 2;
  }
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s, 16) != 0) {
    std::perror("actor_bench agent: listen");
    return 1;
  }
  std::printf("agent listening on %s:%d\n", address.c_str(), port);
  std::fflush(stdout);
  for (;;) {
    int fd = ::accept(s, nullptr, nullptr);
    if (fd < 0)
      continue;
    if (::fork() == 0) {
      ::close(s);
      serve_connection(fd, self);
    }
    ::close(fd);
  }
}

int relay(const std::string& host, const std::string& port, char** argv) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || !found) {
    std::fprintf(stderr, "actor_bench relay: cannot resolve %s\n", host.c_str());
    return 1;
  }
  int fd = ::socket(found->ai_family, SOCK_STREAM, 0);
  bool connected = ::connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  ::freeaddrinfo(found);
  if (!connected) {
    std::fprintf(stderr, "actor_bench relay: no agent at %s:%s\n", host.c_str(), port.c_str());
    return 1;
  }
  std::string line;
  for (char** a = argv; *a; ++a)
    line += (a == argv ? "" : std::string(1, separator)) + *a;
  line += '\n';
  if (!write_all(fd, line.data(), line.size()))
    return 1;
  pollfd p[2] = {{0, POLLIN, 0}, {fd, POLLIN, 0}};
  char buf[4096];
  for (;;) {
    if (::poll(p, 2, -1) < 0)
      return 1;
    if (p[0].revents) {
      auto n = ::read(0, buf, sizeof buf);
      if (n > 0) {
        write_all(fd, buf, static_cast<std::size_t>(n));
      } else {  // our stdin closed: the far command's closes too
        ::shutdown(fd, SHUT_WR);
        p[0].fd = -1;
      }
    }
    if (p[1].revents) {
      auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0)
        return 0;
      if (!write_all(1, buf, static_cast<std::size_t>(n)))
        return 1;
    }
  }
}

bool servers_remote() {
  return servers_at() != nullptr;
}

std::vector<std::string> on_server_host(std::vector<std::string> argv) {
  const char* at = servers_at();
  const char* self = std::getenv("ACTOR_BENCH_SELF");
  if (!at || !self)
    return argv;
  std::string where = at;
  auto colon = where.rfind(':');
  // The bench's own settings (ACTOR_BENCH_POLICY, ...) travel with it.
  std::vector<std::string> out{self, "relay", where.substr(0, colon), where.substr(colon + 1),
                               "/usr/bin/env"};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "ACTOR_BENCH_", 12) == 0 &&
        std::strncmp(*e, "ACTOR_BENCH_SERVERS_AT=", 23) != 0)
      out.push_back(*e);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string server_address() {
  if (const char* at = servers_at()) {
    std::string where = at;
    return where.substr(0, where.rfind(':'));
  }
  const char* rdma = std::getenv("RIOMESH_RDMA_ADDR");
  return rdma ? rdma : "127.0.0.1";
}

}  // namespace bench
