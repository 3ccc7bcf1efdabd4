// Messages for nodes being dialed (learned from a handle, or dialed at run
// time), held until their connection is up, in order, at most `max` per
// node: what a message for a node nobody is dialing meets is a refusal,
// not a queue. Any thread holds; the I/O thread and the node's events take.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace riomesh::actors {

template <class Message>
class route_waits {
 public:
  explicit route_waits(std::size_t max) : max_(max) {}

  // Messages for `peer` may wait from now on: it is being dialed.
  void expect(const std::string& peer) {
    std::lock_guard<std::mutex> guard(lock_);
    by_peer_.try_emplace(peer);
  }
  // Takes `m` (moved from) if `peer` is expected and has room; otherwise
  // leaves it to the caller, whose refusal it is.
  bool hold(const std::string& peer, Message& m) {
    std::lock_guard<std::mutex> guard(lock_);
    auto it = by_peer_.find(peer);
    if (it == by_peer_.end() || it->second.size() >= max_)
      return false;
    it->second.push_back(std::move(m));
    return true;
  }
  // What waited for `peer`, oldest first; it is expected no more.
  std::deque<Message> take(const std::string& peer) {
    std::lock_guard<std::mutex> guard(lock_);
    std::deque<Message> out;
    if (auto it = by_peer_.find(peer); it != by_peer_.end()) {
      out = std::move(it->second);
      by_peer_.erase(it);
    }
    return out;
  }
  std::vector<std::string> peers() const {
    std::lock_guard<std::mutex> guard(lock_);
    std::vector<std::string> out;
    for (const auto& [peer, waiting] : by_peer_)
      out.push_back(peer);
    return out;
  }
  void clear() {
    std::lock_guard<std::mutex> guard(lock_);
    by_peer_.clear();
  }

 private:
  std::size_t max_;
  mutable std::mutex lock_;
  std::map<std::string, std::deque<Message>> by_peer_;
};

}  // namespace riomesh::actors
