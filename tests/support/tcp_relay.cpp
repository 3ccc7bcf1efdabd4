#include <tcp_relay.hpp>

#include <riomesh/channels/tcp/tcp_socket.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace riomesh::test {

tcp_relay::tcp_relay(config::endpoint to, std::optional<std::size_t> flip_at)
    : to_(std::move(to)), flip_at_(flip_at) {
  auto l = channels::tcp::listen_on({"127.0.0.1", 0});
  if (l.fd < 0)
    throw std::runtime_error("relay: " + l.error);
  listener_ = l.fd;
  port_ = static_cast<std::uint16_t>(channels::tcp::local_port(l.fd));
  thread_ = std::thread([this] { run(); });
}

tcp_relay::~tcp_relay() {
  stop_ = true;
  thread_.join();
  ::close(listener_);
}

std::vector<unsigned char> tcp_relay::seen() const {
  std::lock_guard<std::mutex> guard(lock_);
  return seen_;
}

void tcp_relay::run() {
  while (!stop_) {
    pollfd l{listener_, POLLIN, 0};
    if (::poll(&l, 1, 50) <= 0)
      continue;
    auto in = channels::tcp::accept_from(listener_, {});
    if (in.fd < 0)
      continue;
    auto out = channels::tcp::connect_to(to_, {});
    if (out.fd < 0) {
      ::close(in.fd);
      continue;
    }
    relay(in.fd, out.fd);
  }
}

void tcp_relay::relay(int in_fd, int out_fd) {
  struct {
    int fd;
  } in{in_fd}, out{out_fd};
  std::size_t forwarded = 0;  // of the dialer's stream
  unsigned char buf[65536];
  bool open[2] = {true, true};
  while (!stop_ && (open[0] || open[1])) {
    pollfd p[2] = {{in.fd, static_cast<short>(open[0] ? POLLIN : 0), 0},
                   {out.fd, static_cast<short>(open[1] ? POLLIN : 0), 0}};
    if (::poll(p, 2, 50) <= 0)
      continue;
    for (int side = 0; side < 2; ++side) {
      if (!(p[side].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      int from = side == 0 ? in.fd : out.fd, to = side == 0 ? out.fd : in.fd;
      ssize_t n = ::recv(from, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          open[side] = false;
          ::shutdown(to, SHUT_WR);
        }
        continue;
      }
      if (side == 0) {
        if (flip_at_ && *flip_at_ >= forwarded && *flip_at_ < forwarded + std::size_t(n))
          buf[*flip_at_ - forwarded] ^= 0x01;
        forwarded += static_cast<std::size_t>(n);
        std::lock_guard<std::mutex> guard(lock_);
        seen_.insert(seen_.end(), buf, buf + n);
      }
      for (ssize_t done = 0; done < n;) {
        ssize_t w = ::send(to, buf + done, static_cast<std::size_t>(n - done), MSG_NOSIGNAL);
        if (w <= 0) {
          if (errno == EAGAIN || errno == EINTR)
            continue;
          open[0] = open[1] = false;
          break;
        }
        done += w;
      }
    }
  }
  ::close(in.fd);
  ::close(out.fd);
}

}  // namespace riomesh::test
