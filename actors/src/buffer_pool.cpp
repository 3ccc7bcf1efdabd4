#include <riomesh/buffer_pool.hpp>

#include <riomesh/actors/placement/arena_allocator.hpp>
#include <riomesh/channels/memory/memory_region.hpp>

#include <cstdlib>
#include <list>
#include <mutex>
#include <new>

namespace riomesh {

struct buffer_pool::state {
  struct slab {
    // Shared with the buffers' home blocks: a registration of the slab
    // (the node's send cache) keeps its pages until it is dropped.
    std::shared_ptr<channels::memory_region> memory;
    actors::arena_allocator space;
    explicit slab(std::uint64_t size) : space(size) {}
  };

  std::size_t slab_size;
  config::memory_provider provider;
  mutable std::mutex lock;
  std::list<slab> slabs;
  counters stats;

  void drop(slab& s) {
    s.memory.reset();
    --stats.slabs;
    stats.slab_bytes -= s.space.size();
  }
  slab& add_slab(std::size_t at_least) {
    auto size = actors::arena_allocator::round_up(std::max(slab_size, at_least));
    std::string error;
    auto memory = channels::memory_region::make({provider, {}}, size, "riomesh-pool", error);
    if (!memory)
      throw std::bad_alloc();
    slabs.emplace_back(size);
    slabs.back().memory = std::move(memory);
    ++stats.slabs;
    stats.slab_bytes += size;
    return slabs.back();
  }
  void give_back(slab* s, std::uint64_t offset, std::uint64_t length) {
    std::lock_guard<std::mutex> guard(lock);
    s->space.release(offset, length);
    stats.bytes_in_use -= length;
    // An empty slab beyond the first goes: the pool shrinks after a burst.
    if (s->space.allocations() == 0 && slabs.size() > 1) {
      for (auto it = slabs.begin(); it != slabs.end(); ++it)
        if (&*it == s) {
          drop(*it);
          slabs.erase(it);
          break;
        }
    }
  }
};

buffer_pool::buffer_pool(std::size_t slab_size, config::memory_provider provider)
    : state_(std::make_shared<state>()) {
  state_->slab_size = slab_size;
  state_->provider = provider;
}

buffer_pool::~buffer_pool() = default;

buffer buffer_pool::allocate(std::size_t size) {
  if (size == 0)
    return {};
  std::lock_guard<std::mutex> guard(state_->lock);
  state::slab* from = nullptr;
  std::optional<std::uint64_t> offset;
  for (auto& s : state_->slabs)
    if ((offset = s.space.allocate(size))) {
      from = &s;
      break;
    }
  if (!from) {
    from = &state_->add_slab(size);
    offset = from->space.allocate(size);
  }
  auto length = actors::arena_allocator::round_up(size);
  state_->stats.bytes_in_use += length;
  ++state_->stats.allocations;
  // The release holds the pool's state: buffers may outlive the pool.
  auto keep = state_;
  const auto& m = from->memory;
  return buffer::adopt(
      m->data() + *offset, size, buffer::origin::pool,
      [keep, from, at = *offset, length] { keep->give_back(from, at, length); },
      buffer::home{m->data(), static_cast<std::size_t>(from->space.size()), m, m->fd()});
}

buffer_pool::counters buffer_pool::stats() const {
  std::lock_guard<std::mutex> guard(state_->lock);
  return state_->stats;
}

}  // namespace riomesh
