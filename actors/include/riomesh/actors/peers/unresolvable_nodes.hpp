// Node ids a peer was asked of and could not name either: a handle of one
// of those is refused by name at once instead of asked of again. The most
// recent `max` only, since the ids are the peers' to choose. The I/O
// thread's.
#pragma once

#include <riomesh/actors/peers/node_table.hpp>

#include <deque>
#include <set>

namespace riomesh::actors {

class unresolvable_nodes {
 public:
  explicit unresolvable_nodes(std::size_t max = 4096) : max_(max) {}

  void note(const node_table::key& k) {
    if (!keys_.insert(k).second)
      return;
    order_.push_back(k);
    if (order_.size() > max_) {
      keys_.erase(order_.front());
      order_.pop_front();
    }
  }
  bool contains(const node_table::key& k) const { return keys_.count(k) > 0; }
  std::size_t size() const { return keys_.size(); }

 private:
  std::size_t max_;
  std::set<node_table::key> keys_;
  std::deque<node_table::key> order_;  // oldest first
};

}  // namespace riomesh::actors
