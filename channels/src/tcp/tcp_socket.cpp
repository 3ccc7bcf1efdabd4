#include <riomesh/channels/tcp/tcp_socket.hpp>

#include <riomesh/config/address.hpp>

#include "../net/resolve.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace riomesh::channels::tcp {
namespace {

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

void apply_options(int fd, const socket_options& opt) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  if (opt.send_buffer > 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &opt.send_buffer, sizeof opt.send_buffer);
  if (opt.recv_buffer > 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &opt.recv_buffer, sizeof opt.recv_buffer);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

socket_result listen_on(const config::endpoint& at, int backlog) {
  socket_result out;
  auto list = net::resolve(at, true, out.error);
  if (!list)
    return out;
  std::string last = "no address";
  for (auto* ai = list.get(); ai; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = errno_text("socket");
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      out.fd = fd;
      break;
    }
    last = errno_text("listen on " + config::to_string(at));
    ::close(fd);
  }
  if (out.fd < 0)
    out.error = last;
  return out;
}

socket_result connect_to(const config::endpoint& to, const socket_options& opt, int timeout_ms) {
  socket_result out;
  auto list = net::resolve(to, false, out.error);
  if (!list)
    return out;
  std::string last = "no address";
  for (auto* ai = list.get(); ai && out.fd < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last = errno_text("socket");
      continue;
    }
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, timeout_ms);
      int err = 0;
      socklen_t len = sizeof err;
      if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
        rc = 0;
      else
        errno = rc == 0 ? ETIMEDOUT : (err ? err : errno), rc = -1;
    }
    if (rc == 0) {
      apply_options(fd, opt);
      out.fd = fd;
      out.peer = net::name_of(ai->ai_addr);
    } else {
      last = errno_text("connect to " + config::to_string(to));
      ::close(fd);
    }
  }
  if (out.fd < 0)
    out.error = last;
  return out;
}

socket_result accept_from(int listener, const socket_options& opt) {
  socket_result out;
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      out.error = errno_text("accept");
    return out;
  }
  apply_options(fd, opt);
  out.fd = fd;
  out.peer = net::name_of(reinterpret_cast<sockaddr*>(&peer));
  return out;
}

int local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return -1;
  if (ss.ss_family == AF_INET)
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

}  // namespace riomesh::channels::tcp
