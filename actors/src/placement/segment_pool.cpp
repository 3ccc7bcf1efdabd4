#include <riomesh/actors/placement/segment_pool.hpp>

#include <cstring>
#include <vector>

namespace riomesh::actors {

std::shared_ptr<segment_pool> segment_pool::make(channels::memory_source from, std::uint64_t keep) {
  return std::shared_ptr<segment_pool>(new segment_pool(std::move(from), keep));
}

segment_pool::segment_pool(channels::memory_source from, std::uint64_t keep)
    : from_(std::move(from)), keep_(keep) {}

arena_segment segment_pool::take(std::uint64_t size, const std::string& peer, std::string& error) {
  std::shared_ptr<channels::memory_region> region;
  bool clear = false;
  {
    std::lock_guard<std::mutex> guard(lock_);
    auto [first, last] = kept_.equal_range(size);
    auto pick = last;
    for (auto it = first; it != last; ++it)
      if (pick == last || it->second.peer == peer)
        pick = it;
    if (pick != last) {
      region = std::move(pick->second.region);
      clear = pick->second.peer != peer;
      kept_.erase(pick);
      stats_.kept_bytes -= size;
      ++stats_.reused;
      stats_.cleared += clear;
    }
  }
  if (clear)
    std::memset(region->data(), 0, size);
  if (!region) {
    region = channels::memory_region::make(from_, size, "riomesh-arena", error);
    if (!region)
      return {};
    std::lock_guard<std::mutex> guard(lock_);
    ++stats_.made;
  }
  arena_segment seg;
  seg.data = region->data();
  seg.fd = region->fd();
  seg.size = size;
  std::weak_ptr<segment_pool> pool = shared_from_this();
  seg.owner = std::shared_ptr<void>(seg.data, [region, pool, peer](void*) mutable {
    if (auto p = pool.lock())
      p->give(std::move(region), std::move(peer));
  });
  return seg;
}

void segment_pool::give(std::shared_ptr<channels::memory_region> r, std::string peer) {
  std::lock_guard<std::mutex> guard(lock_);
  auto size = r->size();
  if (stats_.kept_bytes + size > keep_)
    return;  // freed as it goes
  stats_.kept_bytes += size;
  kept_.emplace(size, kept{std::move(r), std::move(peer), std::chrono::steady_clock::now()});
}

void segment_pool::trim(std::chrono::steady_clock::time_point now,
                        std::chrono::steady_clock::duration idle) {
  std::vector<std::shared_ptr<channels::memory_region>> going;  // freed outside the lock
  std::lock_guard<std::mutex> guard(lock_);
  for (auto it = kept_.begin(); it != kept_.end();) {
    if (now - it->second.since < idle) {
      ++it;
      continue;
    }
    stats_.kept_bytes -= it->first;
    going.push_back(std::move(it->second.region));
    it = kept_.erase(it);
  }
}

segment_pool::counters segment_pool::stats() const {
  std::lock_guard<std::mutex> guard(lock_);
  return stats_;
}

}  // namespace riomesh::actors
