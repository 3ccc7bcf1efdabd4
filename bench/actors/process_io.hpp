// How a contender's server talks to the bench that started it: "ready PORT"
// once it listens, then it serves until its stdin closes, and says its peak
// resident memory on the way out.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace bench {

inline void announce_ready(std::uint16_t port) {
  std::printf("ready %u\n", static_cast<unsigned>(port));
  std::fflush(stdout);
}

inline void wait_for_stdin_eof() {
  char c;
  while (::read(0, &c, 1) > 0) {
  }
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

inline void report_peak_rss() {
  std::printf("peak_rss_kib %ld\n", peak_rss_kib());
  std::fflush(stdout);
}

}  // namespace bench
