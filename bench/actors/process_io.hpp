// How a contender's processes talk to the bench that started them.
// A server says "ready PORT" once it listens, serves until its stdin closes,
// takes the line "mark" as the start of the measured interval, and on the
// way out says the CPU it used since the mark and its peak resident memory.
// A client says "connected" once it reached every server, starts on "go",
// and prints one "result" line (measure.hpp).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace bench {

// User and system CPU of this whole process, in seconds.
inline double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// VmHWM of this process, in KiB.
inline long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmHWM:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

inline void announce_ready(std::uint16_t port) {
  std::printf("ready %u\n", static_cast<unsigned>(port));
  std::fflush(stdout);
}

// Serves until stdin closes, then reports: the server side of the protocol.
inline void serve_until_stdin_closes() {
  double mark = cpu_seconds();
  std::string line;
  char c;
  while (::read(0, &c, 1) > 0) {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line == "mark")
      mark = cpu_seconds();
    line.clear();
  }
  std::printf("cpu_s %.6f\npeak_rss_kib %ld\n", cpu_seconds() - mark, peak_rss_kib());
  std::fflush(stdout);
}

// The client side: connected to every server, waiting for the others.
inline bool connected_await_go() {
  std::printf("connected\n");
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) > 0)
    if (c == '\n')
      return true;
  return false;
}

}  // namespace bench
