#include <riomesh/actors/io/outbox.hpp>

namespace riomesh::actors {

outbox::pushed outbox::push(outbound_message&& m) {
  std::lock_guard<std::mutex> guard(lock_);
  if (closed_)
    return pushed::closed;
  if (depth() >= bound_) {
    refused_ = true;
    return pushed::full;
  }
  queued_.fetch_add(1, std::memory_order_relaxed);
  bool was_empty = queue_.empty();
  queue_.push_back(std::move(m));
  return was_empty ? pushed::first : pushed::more;
}

std::size_t outbox::take(std::deque<outbound_message>& into) {
  std::lock_guard<std::mutex> guard(lock_);
  auto n = queue_.size();
  if (into.empty()) {
    into.swap(queue_);  // the usual case: the whole batch at once, senders wait less
  } else {
    for (auto& m : queue_)
      into.push_back(std::move(m));
    queue_.clear();
  }
  queued_.fetch_sub(n, std::memory_order_relaxed);
  return n;
}

void outbox::close(std::deque<outbound_message>& into) {
  std::lock_guard<std::mutex> guard(lock_);
  closed_ = true;
  for (auto& m : queue_)
    into.push_back(std::move(m));
  queued_.fetch_sub(queue_.size(), std::memory_order_relaxed);
  backlog_ = 0;
  queue_.clear();
}

}  // namespace riomesh::actors
