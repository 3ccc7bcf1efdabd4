// Why each peer's last connection ended, for the errors of whoever asks
// for it later: the most recent `max` peers only, since peer names are the
// peers' to choose.
#pragma once

#include <deque>
#include <map>
#include <string>

namespace riomesh::actors {

class recent_reasons {
 public:
  explicit recent_reasons(std::size_t max = 4096) : max_(max) {}

  void note(const std::string& peer, const std::string& why) {
    auto [it, fresh] = reasons_.insert_or_assign(peer, why);
    (void)it;
    if (!fresh)
      return;
    order_.push_back(peer);
    if (order_.size() > max_) {
      reasons_.erase(order_.front());
      order_.pop_front();
    }
  }
  // The reason noted for `peer`, or null.
  const std::string* of(const std::string& peer) const {
    auto it = reasons_.find(peer);
    return it == reasons_.end() ? nullptr : &it->second;
  }
  void forget(const std::string& peer) {
    if (reasons_.erase(peer))
      for (auto it = order_.begin(); it != order_.end(); ++it)
        if (*it == peer) {
          order_.erase(it);
          break;
        }
  }

 private:
  std::size_t max_;
  std::map<std::string, std::string> reasons_;
  std::deque<std::string> order_;  // oldest first
};

}  // namespace riomesh::actors
