// Refusals a flood's clients met, by reason: every attempt must be refused,
// and each for a reason it may be refused for (the test lists them), not
// for anything at all.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::test {

class refusals {
 public:
  // `expected`: (what a reason holds, a name for it), first match wins.
  explicit refusals(std::vector<std::pair<std::string, std::string>> expected)
      : expected_(std::move(expected)) {}

  // One attempt's outcome: the reason it was refused (empty: it was not).
  void add(const std::string& reason) {
    std::lock_guard<std::mutex> guard(lock_);
    if (reason.empty()) {
      unexpected_ += "an attempt was accepted; ";
      return;
    }
    ++count_;
    for (const auto& [part, name] : expected_)
      if (reason.find(part) != std::string::npos) {
        ++by_kind_[name];
        return;
      }
    unexpected_ += "'" + reason + "'; ";
  }
  int count() const {
    std::lock_guard<std::mutex> guard(lock_);
    return count_;
  }
  std::string unexpected() const {
    std::lock_guard<std::mutex> guard(lock_);
    return unexpected_;
  }
  // "12 wrong secret, 3 evicted"
  std::string summary() const {
    std::lock_guard<std::mutex> guard(lock_);
    std::string out;
    for (const auto& [name, n] : by_kind_)
      out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return (out.empty() ? "none" : out) + " refused";
  }

 private:
  mutable std::mutex lock_;
  std::vector<std::pair<std::string, std::string>> expected_;
  std::map<std::string, int> by_kind_;
  int count_ = 0;
  std::string unexpected_;
};

}  // namespace riomesh::test
