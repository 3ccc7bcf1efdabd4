#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <sstream>

namespace pubsub {
namespace {

// Names, topics and reasons come from peers: a line break in one would
// start a report line of the peer's making (a forged summary for the
// launcher to count). Control bytes and the backslash go as \xNN.
std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f || c == '\\') {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string report_line(const std::string& role, const std::string& name, const std::string& event,
                        const fields& values) {
  std::string line = "pubsub " + role + " " + escaped(name) + ": " + event;
  for (const auto& [key, value] : values)
    line += " " + key + "=" + escaped(value);
  return line + "\n";
}

void report(const std::string& role, const std::string& name, const std::string& event,
            const fields& values) {
  auto line = report_line(role, name, event, values);
  // Actors of one node share stdout: whole lines only.
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::string fixed(double value, int decimals) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(decimals);
  out << value;
  return out.str();
}

void latency_record::add(std::uint64_t ns) {
  if (seen_++ % stride_ != 0)
    return;
  kept_.push_back(ns);
  if (kept_.size() >= limit_) {  // thin out: keep every other one from now on
    std::vector<std::uint64_t> half;
    for (std::size_t i = 0; i < kept_.size(); i += 2)
      half.push_back(kept_[i]);
    kept_ = std::move(half);
    stride_ *= 2;
  }
}

std::uint64_t latency_record::percentile(double p) {
  if (kept_.empty())
    return 0;
  auto rank = static_cast<std::size_t>(p * static_cast<double>(kept_.size() - 1) + 0.5);
  std::nth_element(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(rank), kept_.end());
  return kept_[rank];
}

}  // namespace pubsub
