#include <riomesh/channels/memory/invalidation_bus.hpp>

#include <algorithm>

namespace riomesh::channels {

invalidation_bus& invalidation_bus::global() {
  static invalidation_bus bus;
  return bus;
}

std::shared_ptr<invalidation_bus::inbox> invalidation_bus::subscribe() {
  auto box = std::make_shared<inbox>();
  std::lock_guard<std::mutex> guard(lock_);
  inboxes_.push_back(box);
  return box;
}

void invalidation_bus::publish(const void* p, std::size_t n) {
  auto at = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> guard(lock_);
  inboxes_.erase(std::remove_if(inboxes_.begin(), inboxes_.end(),
                                [&](const std::weak_ptr<inbox>& w) {
                                  auto box = w.lock();
                                  if (!box)
                                    return true;
                                  std::lock_guard<std::mutex> inner(box->lock);
                                  box->ranges.emplace_back(at, n);
                                  return false;
                                }),
                 inboxes_.end());
}

}  // namespace riomesh::channels
