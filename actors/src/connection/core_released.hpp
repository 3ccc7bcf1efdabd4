// What the application's threads hand back to a connection core: the
// core's own, shared with the views it gave out.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

namespace riomesh::actors {

// Views of our arena drop on any thread; the core takes their ranges in
// on its own. Shared so that a view outliving the core finds it gone.
struct connection_core::released {
  std::mutex lock;
  std::vector<arena_range> ranges;
  // Set with the first range: most pumps find none without the lock.
  std::atomic<bool> any{false};
  std::function<void()> wake;
  bool open = true;
  // Bytes of fetched lent buffers the application let go of (rendezvous).
  std::atomic<std::uint64_t> fetched_back{0};
};

}  // namespace riomesh::actors
