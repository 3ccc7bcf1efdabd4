// tcp_bench: the tcp channel against raw TCP sockets, two processes on
// loopback, all in one run so the ratios hold on a noisy machine.
//
//   stream   one-way bytes in messages of a given size (raw: write/read)
//   iowrite  the same bytes placed into the receiver's mapped region
//   ping     8-byte round trips
//
// Usage: tcp_bench [--quick] [--ping]   (--ping: only the round trips)
#include "size_name.hpp"

#include <riomesh/channels/tcp/tcp_channel.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace riomesh;
using namespace riomesh::channels;
using namespace riomesh::channels::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr int repetitions = 3;
constexpr std::uint64_t map_offset = 0x100000000ull;

// ---- raw sockets: blocking, TCP_NODELAY, as a plain program would ----------
int raw_connect(std::uint16_t port) {
  auto s = connect_to({"127.0.0.1", port}, {});
  int flags = 0;
  ::ioctl(s.fd, FIONBIO, &flags);  // back to blocking
  return s.fd;
}
void raw_write(int fd, const unsigned char* p, std::size_t n) {
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0)
      std::exit(3);
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}
void raw_read(int fd, unsigned char* p, std::size_t n) {
  while (n > 0) {
    ssize_t k = ::recv(fd, p, n, 0);
    if (k <= 0)
      std::exit(4);
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

// ---- the channel, driven by a poll loop like a progress thread ------------
// Events seen since the last predicate call, for predicates that wait on one.
std::vector<event> events;

template <class Done>
void drive(channel& ch, Done&& done) {
  for (;;) {
    ch.progress();
    events.clear();
    ch.take_events(events);
    if (done())
      return;
    if (ch.closed()) {
      std::fprintf(stderr, "channel closed: %s\n", ch.reason().c_str());
      std::exit(5);
    }
    pollfd p{ch.wait_fd(), static_cast<short>(POLLIN | (ch.wants_write() ? POLLOUT : 0)), 0};
    ::poll(&p, 1, 100);
  }
}
void ch_send(channel& ch, const unsigned char* p, std::size_t n) {
  std::size_t sent = 0;
  sent += ch.send(p, n).bytes;
  drive(ch, [&] { return sent == n || (sent += ch.send(p + sent, n - sent).bytes) == n; });
}
void ch_recv(channel& ch, unsigned char* p, std::size_t n) {
  std::size_t got = 0;
  drive(ch, [&] {
    got += ch.recv(p + got, n - got).bytes;
    return got == n;
  });
}
// Reads and drops `n` stream bytes in place.
void ch_drain(channel& ch, std::uint64_t n) {
  drive(ch, [&] {
    for (auto [p, k] = ch.peek(); k > 0 && n > 0; std::tie(p, k) = ch.peek()) {
      k = std::min<std::uint64_t>(k, n);
      ch.consume(k);
      n -= k;
    }
    return n == 0;
  });
}

// Both ends shut down and wait for each other: a clean end, not a reset.
void close_channel(channel& ch) {
  ch.shutdown(shutdown_how::both);
  drive(ch, [&] { return ch.closed(); });
}

struct test_case {
  std::string kind;  // raw-stream, ch-stream, ch-iowrite, raw-ping, ch-ping
  std::size_t size;
  std::uint64_t total;  // bytes, or round trips for ping
};

// The receiving / echoing side of one case.
void serve(int listener, const test_case& t) {
  pollfd p{listener, POLLIN, 0};
  ::poll(&p, 1, 10000);
  auto s = accept_from(listener, {});
  std::vector<unsigned char> buf(std::max<std::size_t>(t.size, 1u << 20));
  unsigned char ack = 1;
  if (t.kind.rfind("raw", 0) == 0) {
    int flags = 0;
    ::ioctl(s.fd, FIONBIO, &flags);
    if (t.kind == "raw-ping") {
      for (std::uint64_t i = 0; i < t.total; ++i) {
        raw_read(s.fd, buf.data(), t.size);
        raw_write(s.fd, buf.data(), t.size);
      }
    } else {
      for (std::uint64_t left = t.total; left > 0;) {
        ssize_t k = ::recv(s.fd, buf.data(), std::min<std::uint64_t>(left, buf.size()), 0);
        if (k <= 0)
          std::exit(6);
        left -= static_cast<std::uint64_t>(k);
      }
      raw_write(s.fd, &ack, 1);
    }
    ::close(s.fd);
    return;
  }
  tcp_channel ch(s.fd, s.peer, tcp_params{});
  if (t.kind == "ch-ping") {
    for (std::uint64_t i = 0; i < t.total; ++i) {
      ch_recv(ch, buf.data(), t.size);
      ch_send(ch, buf.data(), t.size);
    }
  } else if (t.kind == "ch-iowrite") {
    std::vector<unsigned char> region(t.size);
    ch.map(region.data(), region.size(), map_offset);
    ch_drain(ch, 1);  // the writer's "all placed" byte, after every placement
    ch_send(ch, &ack, 1);
  } else {
    ch_drain(ch, t.total);
    ch_send(ch, &ack, 1);
  }
  close_channel(ch);
}

// The sending side; returns seconds (stream) or the sorted round trips (ping).
std::vector<double> drive_case(std::uint16_t port, const test_case& t) {
  std::vector<unsigned char> buf(t.size, 0x5a);
  unsigned char ack = 0;
  std::vector<double> out;
  if (t.kind.rfind("raw", 0) == 0) {
    int fd = raw_connect(port);
    if (t.kind == "raw-ping") {
      for (std::uint64_t i = 0; i < t.total; ++i) {
        auto a = clock_type::now();
        raw_write(fd, buf.data(), t.size);
        raw_read(fd, buf.data(), t.size);
        out.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - a).count());
      }
    } else {
      auto a = clock_type::now();
      for (std::uint64_t sent = 0; sent < t.total; sent += t.size)
        raw_write(fd, buf.data(), t.size);
      raw_read(fd, &ack, 1);
      out.push_back(std::chrono::duration<double>(clock_type::now() - a).count());
    }
    ::close(fd);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string error;
  auto ch = tcp_channel::connect({"127.0.0.1", port}, tcp_params{}, {}, error);
  if (!ch)
    std::exit(7);
  if (t.kind == "ch-ping") {
    for (std::uint64_t i = 0; i < t.total; ++i) {
      auto a = clock_type::now();
      ch_send(*ch, buf.data(), t.size);
      ch_recv(*ch, buf.data(), t.size);
      out.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - a).count());
    }
  } else if (t.kind == "ch-iowrite") {
    bool mapped = false;
    drive(*ch, [&] {  // wait for the receiver's map
      for (auto& e : events)
        mapped |= e.kind == event_kind::peer_iomap;
      return mapped;
    });
    auto a = clock_type::now();
    std::uint64_t sent = 0, token = 0;
    std::size_t at = 0;
    drive(*ch, [&] {
      while (sent < t.total) {
        auto r = ch->iowrite(buf.data() + at, t.size - at, map_offset + at, ++token);
        at += r.bytes;
        if (at == t.size) {
          sent += t.size;
          at = 0;
        }
        if (r.st != status::ok)
          break;
      }
      return sent >= t.total;
    });
    ch_send(*ch, &ack, 1);  // behind every placement
    ch_recv(*ch, &ack, 1);
    out.push_back(std::chrono::duration<double>(clock_type::now() - a).count());
  } else {
    auto a = clock_type::now();
    for (std::uint64_t sent = 0; sent < t.total; sent += t.size)
      ch_send(*ch, buf.data(), t.size);
    ch_recv(*ch, &ack, 1);
    out.push_back(std::chrono::duration<double>(clock_type::now() - a).count());
  }
  close_channel(*ch);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, ping_only = false;
  for (int i = 1; i < argc; ++i) {
    quick |= std::string{argv[i]} == "--quick";
    ping_only |= std::string{argv[i]} == "--ping";
  }
  const std::size_t sizes[] = {4096, 65536, 1u << 20, 16u << 20};
  std::vector<test_case> cases;
  for (auto size : sizes) {
    if (ping_only)
      break;
    std::uint64_t total = quick ? std::max<std::uint64_t>(size * 4, 8u << 20) : (512ull << 20);
    total = total / size * size;
    // Interleaved repetitions: a burst of noise hits all three kinds alike.
    for (int rep = 0; rep < (quick ? 1 : repetitions); ++rep)
      for (const char* kind : {"raw-stream", "ch-stream", "ch-iowrite"})
        cases.push_back({kind, size, total});
  }
  std::uint64_t trips = quick ? 200 : 20000;
  cases.push_back({"raw-ping", 8, trips});
  cases.push_back({"ch-ping", 8, trips});

  auto listener = listen_on({"127.0.0.1", 0});
  auto port = static_cast<std::uint16_t>(local_port(listener.fd));
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child == 0) {
    for (const auto& t : cases)
      serve(listener.fd, t);
    ::_exit(0);
  }
  ::close(listener.fd);

  std::printf("tcp channel vs raw TCP, two processes on loopback (%s)\n",
              quick ? "quick: figures not meaningful"
                    : "512 MiB per stream case, median of 3 interleaved runs");
  std::printf("%-8s %14s %14s %7s %14s %7s\n", "size", "raw GB/s", "stream GB/s", "ratio",
              "iowrite GB/s", "ratio");
  std::vector<double> rates;
  std::map<std::string, std::vector<double>> by_kind;  // GB/s of each repetition
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& t = cases[i];
    std::fprintf(stderr, "  running %s %s...\n", t.kind.c_str(), size_name(t.size).c_str());
    auto r = drive_case(port, t);
    if (t.kind.find("ping") != std::string::npos) {
      rates.push_back(r[r.size() / 2]);
      rates.push_back(r[r.size() * 99 / 100]);
      continue;
    }
    by_kind[t.kind].push_back(double(t.total) / r[0] / 1e9);
    bool last_of_size = i + 1 == cases.size() || cases[i + 1].size != t.size;
    if (!last_of_size)
      continue;
    auto median = [&](const char* kind) {
      auto v = by_kind[kind];
      std::sort(v.begin(), v.end());
      by_kind[kind].clear();
      return v[v.size() / 2];
    };
    double raw = median("raw-stream"), st = median("ch-stream"), io = median("ch-iowrite");
    std::printf("%-8s %14.2f %14.2f %7.2f %14.2f %7.2f\n", size_name(t.size).c_str(), raw, st,
                st / raw, io, io / raw);
  }
  double raw_p50 = rates[rates.size() - 4], raw_p99 = rates[rates.size() - 3];
  double ch_p50 = rates[rates.size() - 2], ch_p99 = rates.back();
  std::printf(
      "ping-pong 8 B (%llu round trips): raw p50 %.1f us p99 %.1f us; channel p50 %.1f us "
      "p99 %.1f us; ratio p50 %.2f\n",
      static_cast<unsigned long long>(trips), raw_p50, raw_p99, ch_p50, ch_p99, ch_p50 / raw_p50);
  int st = 0;
  ::waitpid(child, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
