// Sockets for the tcp channel: listening, connecting (IPv4, IPv6, names) and
// the options every channel socket gets. Errors come back as text that names
// the address.
#pragma once

#include <riomesh/config/settings.hpp>

#include <string>

namespace riomesh::channels::tcp {

struct socket_options {
  int send_buffer = 0;  // SO_SNDBUF; 0 keeps the kernel's
  int recv_buffer = 0;  // SO_RCVBUF
};

// A file descriptor, or -1 with `error` set.
struct socket_result {
  int fd = -1;
  std::string error;
  std::string peer;  // "host:port" of the other end
};

// Listens (non-blocking, SO_REUSEADDR); port 0 picks one: see local_port().
socket_result listen_on(const config::endpoint& at, int backlog = 128);
// Resolves and connects, blocking up to `timeout_ms`, then makes it non-blocking.
socket_result connect_to(const config::endpoint& to, const socket_options& opt,
                         int timeout_ms = 5000);
// Accepts one pending connection; fd -1 and no error when none is waiting.
socket_result accept_from(int listener, const socket_options& opt);
int local_port(int fd);
// TCP_NODELAY, SO_KEEPALIVE, buffer sizes, O_NONBLOCK.
void apply_options(int fd, const socket_options& opt);

}  // namespace riomesh::channels::tcp
