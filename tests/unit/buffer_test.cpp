#include <riomesh/buffer_pool.hpp>
#include <riomesh/channels/memory/registration_cache.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

using namespace riomesh;

namespace {

struct counting_registrar : channels::registrar {
  std::map<std::uintptr_t, std::size_t> live;
  std::uint32_t next = 1;
  bool refuse = false;
  std::optional<channels::registration> register_range(std::uintptr_t base,
                                                       std::size_t length) override {
    if (refuse)
      return std::nullopt;
    live[base] = length;
    return channels::registration{base, length, next++, 0, nullptr};
  }
  void deregister(const channels::registration& r) override { live.erase(r.base); }
};

}  // namespace

TEST_CASE("buffer: copies share the bytes, the owner gets them back once, at the last drop") {
  std::vector<unsigned char> mine(100, 7);
  std::atomic<int> released{0};
  {
    auto b = buffer::wrap(mine.data(), mine.size(), [&] { ++released; });
    CHECK(b.where() == buffer::origin::user);
    buffer c = b;
    CHECK(c.data() == mine.data());
    CHECK(c.use_count() == 2);
    std::thread t([copy = c]() mutable { copy[0] = 9; });  // dropped on another thread
    t.join();
    CHECK(mine[0] == 9);
    CHECK(released == 0);
  }
  CHECK(released == 1);
}

TEST_CASE("buffer: copy_of owns a private copy, the empty buffer is empty") {
  unsigned char src[3] = {1, 2, 3};
  auto b = buffer::copy_of(src, 3);
  CHECK(b.where() == buffer::origin::copy);
  CHECK(b.data() != src);
  CHECK(std::memcmp(b.data(), src, 3) == 0);
  buffer e;
  CHECK(e.empty());
  CHECK(e.data() == nullptr);
  CHECK(e.where() == buffer::origin::none);
  CHECK(buffer::copy_of(src, 0).empty());
}

TEST_CASE("buffer pool: registered slabs, ranges reused, nothing leaked") {
  auto fabric = std::make_shared<counting_registrar>();
  buffer_pool pool(1 << 20, fabric);
  unsigned char* first = nullptr;
  {
    auto a = pool.allocate(1000);
    CHECK(a.where() == buffer::origin::pool);
    CHECK(a.size() == 1000);
    first = a.data();
    auto* reg = pool.registration_of(a);
    REQUIRE(reg);
    CHECK(reg->base <= reinterpret_cast<std::uintptr_t>(a.data()));
    CHECK(fabric->live.size() == 1);
    CHECK(pool.stats().bytes_in_use == 1024);
    CHECK(pool.registration_of(buffer::copy_of("x", 1)) == nullptr);
  }
  CHECK(pool.stats().bytes_in_use == 0);
  CHECK(pool.allocate(10).data() == first);  // the range came back
  {
    auto big = pool.allocate(3 << 20);  // larger than a slab: a slab of its own
    CHECK(pool.stats().slabs == 2);
    CHECK(fabric->live.size() == 2);
  }
  CHECK(pool.stats().slabs == 1);  // and it went with the buffer
  CHECK(fabric->live.size() == 1);
  CHECK(pool.allocate(0).empty());
}

TEST_CASE("buffer pool: a buffer may outlive the pool") {
  auto fabric = std::make_shared<counting_registrar>();
  buffer kept;
  {
    buffer_pool pool(1 << 16, fabric);
    kept = pool.allocate(100);
  }
  std::memset(kept.data(), 1, kept.size());  // still valid (ASan would say otherwise)
  CHECK(fabric->live.size() == 1);
  kept = buffer{};
  CHECK(fabric->live.empty());
}

TEST_CASE("buffer pool: a refused registration is an allocation failure") {
  auto fabric = std::make_shared<counting_registrar>();
  fabric->refuse = true;
  buffer_pool pool(1 << 16, fabric);
  CHECK_THROWS_AS(pool.allocate(10), std::bad_alloc);
  CHECK(pool.stats().slabs == 0);
}

TEST_CASE("buffer pool: allocations and drops from several threads keep the books") {
  buffer_pool pool(1 << 20, nullptr);
  std::atomic<int> overwritten{0};
  auto worker = [&pool, &overwritten](unsigned seed) {
    std::vector<buffer> held;
    for (unsigned i = 0; i < 3000; ++i) {
      if (held.size() < 20 && (i * seed) % 3 != 0) {
        auto b = pool.allocate(1 + (i * 7919 + seed) % 70000);
        std::memset(b.data(), static_cast<int>(seed), b.size());
        held.push_back(std::move(b));
      } else if (!held.empty()) {
        auto mine = [seed](unsigned char c) { return c == static_cast<unsigned char>(seed); };
        if (!std::all_of(held.front().begin(), held.front().end(), mine))
          ++overwritten;  // another thread's buffer overlapped ours
        held.erase(held.begin());
      }
    }
  };
  std::thread a(worker, 1), b(worker, 2);
  worker(3);
  a.join();
  b.join();
  CHECK(overwritten == 0);
  CHECK(pool.stats().bytes_in_use == 0);
  CHECK(pool.stats().slabs == 1);
}
