// User memory leaves riomesh when its last buffer handle drops; the user
// may then free it, and the allocator may hand the same addresses out for
// something else. Every connection that cached a registration of it must
// forget that registration before its next send, or it would send pinned
// old pages in place of the new bytes. The bus carries "this range is
// going away" from whichever thread drops the buffer to every cache; each
// takes its notices in on its own thread, before it looks anything up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace riomesh::channels {

class invalidation_bus {
 public:
  // A subscriber's mailbox of ranges gone.
  struct inbox {
    std::mutex lock;
    std::vector<std::pair<std::uintptr_t, std::size_t>> ranges;
    std::vector<std::pair<std::uintptr_t, std::size_t>> take() {
      std::lock_guard<std::mutex> guard(lock);
      return std::move(ranges);
    }
  };

  // The process's bus.
  static invalidation_bus& global();

  std::shared_ptr<inbox> subscribe();
  // Every live inbox gets the range; dead ones are dropped.
  void publish(const void* p, std::size_t n);

 private:
  std::mutex lock_;
  std::vector<std::weak_ptr<inbox>> inboxes_;
};

}  // namespace riomesh::channels
