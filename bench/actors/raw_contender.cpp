// Raw TCP, as a plain program would do it: blocking sockets, TCP_NODELAY,
// a thread per connection on each side. "oneway": length-prefixed messages
// written back to back and read into one buffer, a single ack at the end
// (no per-message acks: the ceiling); "window": the same requests, each
// answered with its 8-byte sequence number, `window` of them open, as the
// actor contenders do; "rtt" and "echo": ping-pong of the payload.
// "raw-spin" is the same with every read and write busy-polling a
// non-blocking call instead of sleeping in the kernel: the loopback limit
// of a round trip, for a runtime that busy-polls too.
#include "measure.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace bench {
namespace {

enum mode : std::uint32_t { stream = 0, ping_pong = 1, windowed = 2 };

struct header {
  std::uint32_t mode = stream;
  std::uint32_t size = 0;
  std::uint64_t count = 0;
};

// Set once per process, before any connection: the raw-spin contender.
bool spin = false;

bool again(ssize_t r) {
  return spin && r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

bool read_all(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    auto got = ::recv(fd, c, n, spin ? MSG_DONTWAIT : 0);
    if (again(got))
      continue;
    if (got <= 0)
      return false;
    c += got, n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* p, std::size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    auto put = ::send(fd, c, n, spin ? MSG_DONTWAIT | MSG_NOSIGNAL : MSG_NOSIGNAL);
    if (again(put))
      continue;
    if (put <= 0)
      return false;
    c += put, n -= static_cast<std::size_t>(put);
  }
  return true;
}

// One frame, length and payload, in as few writes as the kernel allows.
bool send_frame(int fd, std::uint64_t len, const char* data) {
  std::size_t total = sizeof len + len, done = 0;
  while (done < total) {
    iovec parts[2];
    int n = 0;
    if (done < sizeof len) {
      parts[n++] = {reinterpret_cast<char*>(&len) + done, sizeof len - done};
      parts[n++] = {const_cast<char*>(data), len};
    } else {
      parts[n++] = {const_cast<char*>(data) + (done - sizeof len), total - done};
    }
    msghdr m{};
    m.msg_iov = parts;
    m.msg_iovlen = static_cast<std::size_t>(n);
    auto put = ::sendmsg(fd, &m, spin ? MSG_DONTWAIT | MSG_NOSIGNAL : MSG_NOSIGNAL);
    if (again(put))
      continue;
    if (put <= 0)
      return false;
    done += static_cast<std::size_t>(put);
  }
  return true;
}

void no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void serve_one(int fd) {
  no_delay(fd);
  header h;
  while (read_all(fd, &h, sizeof h)) {
    std::vector<char> buf(std::max<std::size_t>(h.size, 8));
    for (std::uint64_t i = 0; i < h.count; ++i) {
      std::uint64_t len = 0;
      if (!read_all(fd, &len, sizeof len) || len > buf.size() || !read_all(fd, buf.data(), len))
        return;
      if (h.mode == ping_pong && !write_all(fd, buf.data(), len))
        return;
      if (h.mode == windowed && !write_all(fd, &i, sizeof i))
        return;
    }
    std::uint64_t ack = h.count;
    if (h.mode == stream && !write_all(fd, &ack, sizeof ack))
      return;
  }
}

}  // namespace

int raw_serve(int, bool busy_poll) {
  spin = busy_poll;
  int l = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 128) != 0 ||
      ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("raw server");
    return 1;
  }
  announce_ready(ntohs(a.sin_port));
  // A thread per connection, as a plain server would do for a few dozen.
  std::thread([l] {
    for (;;) {
      int fd = ::accept(l, nullptr, nullptr);
      if (fd < 0)
        return;
      std::thread([fd] {
        serve_one(fd);
        ::close(fd);
      }).detach();
    }
  }).detach();
  serve_until_stdin_closes();
  return 0;
}

namespace {

int dial(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("raw client");
    ::close(fd);
    return -1;
  }
  no_delay(fd);
  return fd;
}

// One connection's share of the job; appends its round trips to `rtts`.
bool drive_one(int fd, const job& j, std::vector<double>& rtts) {
  bool rtt = round_trips(j);  // the payload comes back: "rtt" and "echo" alike
  header h{rtt                     ? ping_pong
           : j.pattern == "window" ? windowed
                                   : stream,
           static_cast<std::uint32_t>(j.size), j.count};
  std::vector<char> buf(std::max<std::size_t>(j.size, 8), 'x');
  bool ok = write_all(fd, &h, sizeof h);
  if (h.mode == windowed) {
    // `window` requests open: each answer read lets the next one go.
    std::uint64_t sent = 0, seq = 0;
    for (; ok && sent < std::min(j.window, j.count); ++sent)
      ok = send_frame(fd, j.size, buf.data());
    for (std::uint64_t answered = 0; ok && answered < j.count; ++answered) {
      ok = read_all(fd, &seq, sizeof seq) && seq == answered;
      if (ok && sent < j.count) {
        ok = send_frame(fd, j.size, buf.data());
        ++sent;
      }
    }
    return ok;
  }
  for (std::uint64_t i = 0; ok && i < j.count; ++i) {
    auto sent_at = clock_type::now();
    ok = send_frame(fd, j.size, buf.data());
    if (ok && rtt) {
      ok = read_all(fd, buf.data(), j.size);
      rtts.push_back(
          std::chrono::duration<double, std::micro>(clock_type::now() - sent_at).count());
    }
  }
  std::uint64_t ack = 0;
  if (ok && h.mode == stream)
    ok = read_all(fd, &ack, sizeof ack);
  return ok;
}

}  // namespace

int raw_drive(const ports& to, const job& j, bool busy_poll) {
  spin = busy_poll;
  std::vector<int> fds;
  for (auto port : to)
    if (int fd = dial(port); fd >= 0)
      fds.push_back(fd);
  if (fds.size() != to.size() || !connected_await_go())
    return 1;
  auto cpu = cpu_seconds();
  auto start = clock_type::now();
  std::vector<std::vector<double>> rtts(fds.size());
  std::vector<char> ok(fds.size(), 0);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < fds.size(); ++i)
    threads.emplace_back([&, i] { ok[i] = drive_one(fds[i], j, rtts[i]); });
  for (auto& t : threads)
    t.join();
  std::vector<double> all;
  for (auto& r : rtts)
    all.insert(all.end(), r.begin(), r.end());
  auto o = finish(j, j.count * fds.size(), start, std::move(all));
  o.cpu_s = cpu_seconds() - cpu;
  for (int fd : fds)
    ::close(fd);
  if (std::count(ok.begin(), ok.end(), 0) > 0) {
    std::fprintf(stderr, "raw client: connection failed\n");
    return 1;
  }
  o.copied = 0;
  print(o);
  return 0;
}

}  // namespace bench
