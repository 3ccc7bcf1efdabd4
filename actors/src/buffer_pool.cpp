#include <riomesh/buffer_pool.hpp>

#include <riomesh/actors/placement/arena_allocator.hpp>
#include <riomesh/channels/memory/registration_cache.hpp>

#include <cstdlib>
#include <list>
#include <mutex>
#include <new>

namespace riomesh {

struct buffer_pool::state {
  struct slab {
    unsigned char* memory = nullptr;
    // Shared with the buffers' home blocks: connections that registered
    // the slab keep its pages until they deregister it.
    std::shared_ptr<unsigned char> owner;
    actors::arena_allocator space;
    std::optional<channels::registration> reg;
    explicit slab(std::uint64_t size) : space(size) {}
  };

  std::size_t slab_size;
  std::shared_ptr<channels::registrar> fabric;
  mutable std::mutex lock;
  std::list<slab> slabs;
  counters stats;

  ~state() {
    for (auto& s : slabs)
      drop(s);
  }
  void drop(slab& s) {
    if (s.reg && fabric)
      fabric->deregister(*s.reg);
    s.owner.reset();
    --stats.slabs;
    stats.slab_bytes -= s.space.size();
  }
  slab& add_slab(std::size_t at_least) {
    auto size = actors::arena_allocator::round_up(std::max(slab_size, at_least));
    void* memory = nullptr;
    if (posix_memalign(&memory, 4096, size) != 0)
      throw std::bad_alloc();
    slabs.emplace_back(size);
    auto& s = slabs.back();
    s.memory = static_cast<unsigned char*>(memory);
    s.owner.reset(s.memory, [](unsigned char* p) { std::free(p); });
    if (fabric) {
      s.reg = fabric->register_range(reinterpret_cast<std::uintptr_t>(memory), size);
      if (!s.reg) {
        slabs.pop_back();  // its owner frees the memory
        throw std::bad_alloc();
      }
    }
    ++stats.slabs;
    stats.slab_bytes += size;
    return s;
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

buffer_pool::buffer_pool(std::size_t slab_size, std::shared_ptr<channels::registrar> fabric)
    : state_(std::make_shared<state>()) {
  state_->slab_size = slab_size;
  state_->fabric = std::move(fabric);
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
  return buffer::adopt(
      from->memory + *offset, size, buffer::origin::pool,
      [keep, from, at = *offset, length] { keep->give_back(from, at, length); },
      buffer::home{from->memory, static_cast<std::size_t>(from->space.size()), from->owner});
}

const channels::registration* buffer_pool::registration_of(const buffer& b) const {
  if (b.where() != buffer::origin::pool)
    return nullptr;
  std::lock_guard<std::mutex> guard(state_->lock);
  for (const auto& s : state_->slabs)
    if (b.data() >= s.memory && b.data() < s.memory + s.space.size())
      return s.reg ? &*s.reg : nullptr;
  return nullptr;
}

buffer_pool::counters buffer_pool::stats() const {
  std::lock_guard<std::mutex> guard(state_->lock);
  return state_->stats;
}

}  // namespace riomesh
