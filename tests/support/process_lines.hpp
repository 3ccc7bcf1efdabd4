// Waiting on what a child process writes (pubsub::launch::node_process, or
// anything with read_lines()): every line kept, so that a failed wait can
// show them all.
#pragma once

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace riomesh::test {

// The lines `p` writes go into `seen` until one of them (the earlier ones
// in `seen` included) matches `pattern`: its first group, or the whole
// match if it has none; "" after `limit`.
template <class Process>
std::string wait_line(Process& p, const std::regex& pattern, std::vector<std::string>& seen,
                      std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  auto until = std::chrono::steady_clock::now() + limit;
  std::size_t looked = 0;
  for (;;) {
    for (; looked < seen.size(); ++looked) {
      std::smatch m;
      if (std::regex_search(seen[looked], m, pattern))
        return m.size() > 1 ? m[1].str() : m[0].str();
    }
    if (std::chrono::steady_clock::now() >= until)
      return {};
    for (auto& l : p.read_lines())
      seen.push_back(std::move(l));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

}  // namespace riomesh::test
