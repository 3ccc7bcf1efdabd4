// First in, first out, in storage it keeps: the messages of a connection
// waiting for their turn to go. std::deque gives a message the size of
// outbound_message a block of its own, so every push allocated and every
// pop freed; this allocates only while the queue grows beyond what it
// ever held. Pushing may move the elements: hold no reference across it.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace riomesh::actors {

template <class T>
class send_queue {
 public:
  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  void push_back(T&& x) { items_.push_back(std::move(x)); }
  // The head becomes `parts`, in their order.
  void replace_front(std::vector<T>&& parts) {
    auto at = items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(head_));
    items_.insert(at, std::make_move_iterator(parts.begin()), std::make_move_iterator(parts.end()));
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    }
  }
  // Before the element at `pos` (0: the head).
  void insert(std::size_t pos, T&& x) {
    items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(head_ + pos), std::move(x));
  }
  void pop_front() {
    // The last: clear() destroys it. Emptying it first by assigning T{}
    // cost a round trip 378 instructions (a queue mostly holds one).
    if (head_ + 1 == items_.size()) {
      items_.clear();
      head_ = 0;
      return;
    }
    items_[head_++] = T{};  // what it holds goes now, not when overwritten
    if (head_ >= compact_from && head_ * 2 >= items_.size()) {
      // Mostly taken: the rest to the front, in one move each.
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  static constexpr std::size_t compact_from = 64;
  std::vector<T> items_;
  std::size_t head_ = 0;
};

}  // namespace riomesh::actors
