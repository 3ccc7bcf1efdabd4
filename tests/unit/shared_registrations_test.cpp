// The node's shared send cache holds the memory each registration covers.
// A registration retired while a write still uses it and the one that
// replaces it can share a base address; the one that goes must leave the
// other's hold alone, or the successor would outlive its pages and the
// device would send whatever the old pages held.
#include <riomesh/channels/memory/shared_registrations.hpp>

#include <doctest/doctest.h>

#include <map>
#include <memory>

using namespace riomesh::channels;

namespace {

struct counting_registrar : registrar {
  std::map<std::uint32_t, registration> live;
  std::uint32_t next_key = 1;
  std::optional<registration> register_range(std::uintptr_t base, std::size_t length) override {
    registration r{base, length, next_key, next_key + 1000, nullptr};
    live[next_key++] = r;
    return r;
  }
  void deregister(const registration& r) override { live.erase(r.lkey); }
};

registration_cache::limits roomy() {
  registration_cache::limits l;
  l.entries = 64;
  l.bytes = 1 << 30;
  return l;
}

// A block of memory as an arena segment is: its holder, and a watch on it.
struct block {
  std::vector<unsigned char> bytes = std::vector<unsigned char>(3 * 4096);
  std::shared_ptr<const void> hold;
  std::weak_ptr<const void> watch;
  block() : hold(std::make_shared<int>(0)), watch(hold) {}
  const void* at() const {
    auto base = (reinterpret_cast<std::uintptr_t>(bytes.data()) + 4095) / 4096 * 4096;
    return reinterpret_cast<const void*>(base);
  }
};

// A send cache over a counting registrar, and one block of memory.
struct cache_and_block {
  counting_registrar fabric;
  shared_registrations regs{fabric, roomy()};
  block b;
  // The last write from [b.at(), +n) completes, the memory is given back,
  // and the cache trims what is left of it.
  void done_with(std::uint64_t id, std::size_t n) {
    regs.unpin(id);
    invalidation_bus::global().publish(b.at(), n);
    regs.trim(registration_cache::clock::now() + std::chrono::seconds(1));
  }
};

}  // namespace

TEST_CASE_FIXTURE(cache_and_block,
                  "shared registrations: a retired registration still in use and its successor "
                  "at the same base each keep their own hold") {
  auto first = regs.acquire(b.at(), 4096, b.hold);
  REQUIRE(first);
  // The memory is going (an arena segment left): retired, but a write
  // still pins it.
  invalidation_bus::global().publish(b.at(), 4096);
  auto second = regs.acquire(b.at(), 4096, b.hold);
  REQUIRE(second);
  CHECK(second->fresh);
  CHECK(second->reg.base == first->reg.base);
  CHECK(second->reg.lkey != first->reg.lkey);
  regs.unpin(first->id);  // the old one goes: its write completed
  CHECK(fabric.live.size() == 1);
  b.hold.reset();                  // the segment's last view
  CHECK_FALSE(b.watch.expired());  // the successor still holds the memory
  done_with(second->id, 4096);
  CHECK(fabric.live.empty());
  CHECK(b.watch.expired());
}

TEST_CASE_FIXTURE(cache_and_block,
                  "shared registrations: a registration grown over an unused one at its base "
                  "keeps the memory the new one covers") {
  auto small = regs.acquire(b.at(), 4096, b.hold);
  REQUIRE(small);
  regs.unpin(small->id);
  // A longer buffer from the same block: the new range starts where the
  // old one did and replaces it.
  auto large = regs.acquire(b.at(), 2 * 4096, b.hold);
  REQUIRE(large);
  CHECK(large->reg.base == small->reg.base);
  CHECK(fabric.live.size() == 1);
  b.hold.reset();
  CHECK_FALSE(b.watch.expired());
  done_with(large->id, 2 * 4096);
  CHECK(b.watch.expired());
}

TEST_CASE_FIXTURE(cache_and_block,
                  "shared registrations: memory the user took back is not found for what comes "
                  "to live there") {
  auto a = regs.acquire(b.at(), 4096, nullptr);  // user memory: no hold
  REQUIRE(a);
  regs.unpin(a->id);
  CHECK(regs.covering(b.at(), 100));
  invalidation_bus::global().publish(b.at(), 4096);  // given back to the user
  CHECK_FALSE(regs.covering(b.at(), 100));
  CHECK(fabric.live.empty());
}
