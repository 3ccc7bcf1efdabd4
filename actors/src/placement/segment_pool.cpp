#include <riomesh/actors/placement/segment_pool.hpp>
#include <riomesh/channels/memory/invalidation_bus.hpp>

#include <cstring>
#include <vector>

namespace riomesh::actors {

std::shared_ptr<segment_pool> segment_pool::make(channels::memory_source from, std::uint64_t keep) {
  return std::shared_ptr<segment_pool>(new segment_pool(std::move(from), keep));
}

segment_pool::segment_pool(channels::memory_source from, std::uint64_t keep)
    : from_(std::move(from)), keep_(keep) {}

std::shared_ptr<channels::memory_region> segment_pool::take_region(std::uint64_t size,
                                                                   const std::string& peer,
                                                                   std::string& error) {
  std::shared_ptr<channels::memory_region> region;
  bool clear = false;
  {
    std::lock_guard<std::mutex> guard(lock_);
    auto [first, last] = kept_.equal_range(size);
    // The newest of the peer's own, else the newest of any: the one most
    // likely still cached.
    auto pick = last;
    for (auto it = first; it != last; ++it)
      if (pick == last || it->second.peer == peer || pick->second.peer != peer)
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
      return nullptr;
    std::lock_guard<std::mutex> guard(lock_);
    ++stats_.made;
  }
  return region;
}

std::shared_ptr<void> segment_pool::lease(const std::shared_ptr<channels::memory_region>& region,
                                          const std::string& peer) {
  std::weak_ptr<segment_pool> pool = shared_from_this();
  return std::shared_ptr<void>(region->data(), [region, pool, peer](void*) mutable {
    if (auto p = pool.lock())
      p->give(std::move(region), std::move(peer));
  });
}

arena_segment segment_pool::take(std::uint64_t size, const std::string& peer, std::string& error) {
  arena_segment seg;
  auto region = take_region(size, peer, error);
  if (!region)
    return seg;
  seg.data = region->data();
  seg.fd = region->fd();
  seg.size = size;
  seg.owner = lease(region, peer);
  return seg;
}

std::uint64_t segment_pool::block_class(std::uint64_t size) {
  constexpr std::uint64_t small = 64u << 10;
  if (size <= 4 * small)
    return std::max<std::uint64_t>(1, (size + small - 1) / small) * small;
  if (size > (std::uint64_t{1} << 62))
    return size;  // no class: rounding up would overflow
  std::uint64_t step = std::uint64_t{1} << (63 - __builtin_clzll(size));
  step /= 4;
  return (size + step - 1) / step * step;
}

buffer segment_pool::block(std::uint64_t size, const std::string& peer, std::string& error) {
  auto region = take_region(block_class(size), peer, error);
  if (!region)
    return {};
  // The registration a device caches holds the region, not the lease: a
  // block it registered still goes back to the pool, and its pages stay
  // alive while registered.
  buffer::home home{region->data(), region->size(), region, region->fd(), region->dmabuf()};
  return buffer::adopt(
      region->data(), region->size(), buffer::origin::arena, [held = lease(region, peer)] {},
      std::move(home));
}

namespace {

// A device's registration cache may hold a block (its home keeps the
// region): told that the memory goes, it lets go too, and the pool's bound
// is what the node holds.
void forget(const channels::memory_region& r) {
  channels::invalidation_bus::global().publish(r.data(), r.size());
}

}  // namespace

void segment_pool::give(std::shared_ptr<channels::memory_region> r, std::string peer) {
  std::unique_lock<std::mutex> guard(lock_);
  auto size = r->size();
  if (stats_.kept_bytes + size > keep_) {
    guard.unlock();
    forget(*r);
    return;  // freed as it goes
  }
  stats_.kept_bytes += size;
  kept_.emplace(size, kept{std::move(r), std::move(peer), std::chrono::steady_clock::now()});
}

void segment_pool::trim(std::chrono::steady_clock::time_point now,
                        std::chrono::steady_clock::duration idle) {
  std::vector<std::shared_ptr<channels::memory_region>> going;  // freed outside the lock
  {
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
  for (const auto& r : going)
    forget(*r);
}

segment_pool::counters segment_pool::stats() const {
  std::lock_guard<std::mutex> guard(lock_);
  return stats_;
}

}  // namespace riomesh::actors
