#include <riomesh/actors/placement/arena_allocator.hpp>
#include <riomesh/actors/placement/release_batch.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace riomesh::actors;

TEST_CASE("arena: allocations are aligned, disjoint, and fail when nothing fits") {
  arena_allocator a(1024);
  auto x = a.allocate(1), y = a.allocate(100), z = a.allocate(64);
  REQUIRE(x);
  REQUIRE(y);
  REQUIRE(z);
  CHECK(*x == 0);
  CHECK(*y == 64);   // 1 byte took a whole 64-byte unit
  CHECK(*z == 192);  // 100 bytes took 128
  CHECK(a.free_bytes() == 1024 - 256);
  CHECK_FALSE(a.allocate(1024 - 256 + 1));
  CHECK(a.allocate(1024 - 256));
  CHECK_FALSE(a.allocate(1));
  CHECK_FALSE(a.allocate(0));
}

TEST_CASE("arena: releases in any order coalesce back to one extent") {
  arena_allocator a(64 * 8);
  std::vector<std::uint64_t> at;
  for (int i = 0; i < 8; ++i)
    at.push_back(*a.allocate(64));
  CHECK(a.largest_free() == 0);
  for (int i : {3, 0, 7, 5, 1, 6, 2, 4})
    CHECK(a.release(at[i], 64));
  CHECK(a.largest_free() == 64 * 8);
  CHECK(a.allocate(64 * 8) == std::uint64_t{0});
}

TEST_CASE("arena: a merged run of adjacent allocations is one release") {
  arena_allocator a(4096);
  auto x = *a.allocate(64);
  CHECK(a.allocate(128) == x + 64);
  a.allocate(64);
  CHECK(a.release(x, 64 + 128));
  CHECK(a.allocations() == 1);
  CHECK(a.free_bytes() == 4096 - 64);
}

TEST_CASE("arena: releasing space never given changes nothing") {
  arena_allocator a(4096);
  auto x = *a.allocate(128), y = *a.allocate(128);
  (void)y;
  CHECK_FALSE(a.release(x + 64, 64));      // inside an allocation
  CHECK_FALSE(a.release(x, 64));           // part of one
  CHECK_FALSE(a.release(x, 128 + 64));     // one and a part
  CHECK_FALSE(a.release(x, 128 * 3));      // past the allocations, into free space
  CHECK_FALSE(a.release(1024, 64));        // free space
  CHECK_FALSE(a.release(4096, 64));        // past the end
  CHECK_FALSE(a.release(~0ull - 10, 64));  // wrapping
  CHECK(a.allocations() == 2);
  CHECK(a.free_bytes() == 4096 - 256);
  CHECK(a.release(x, 128));
  CHECK_FALSE(a.release(x, 128));  // twice
}

TEST_CASE("arena: random allocate and release keep the books exact") {
  std::mt19937_64 rng(7);
  arena_allocator a(1 << 20);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> held;
  for (int step = 0; step < 20000; ++step) {
    if (held.empty() || rng() % 2) {
      std::uint64_t n = 1 + rng() % 40000;
      if (auto at = a.allocate(n)) {
        auto len = arena_allocator::round_up(n);
        for (auto& [o, l] : held)  // disjoint from everything held
          REQUIRE((*at + len <= o || o + l <= *at));
        held.emplace_back(*at, len);
      }
    } else {
      auto i = rng() % held.size();
      REQUIRE(a.release(held[i].first, held[i].second));
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::uint64_t used = 0;
    for (auto& h : held)
      used += h.second;
    REQUIRE(a.free_bytes() == a.size() - used);
  }
  a.reset();
  CHECK(a.largest_free() == a.size());
}

TEST_CASE("release batch: merges adjacent ranges, due by bytes, count or time") {
  using clock = release_batch::clock;
  auto t0 = clock::now();
  release_batch::limits l;
  l.bytes = 1000;
  l.ranges = 3;
  l.delay = std::chrono::microseconds(100);
  release_batch b(l);
  CHECK_FALSE(b.due(t0));
  b.add({128, 64}, t0);
  b.add({0, 64}, t0);
  b.add({64, 64}, t0);  // joins both neighbours
  CHECK_FALSE(b.due(t0));
  CHECK(b.due(t0 + std::chrono::microseconds(100)));
  CHECK(b.deadline() == t0 + std::chrono::microseconds(100));
  auto ranges = b.take();
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0] == arena_range{0, 192});
  CHECK(b.empty());
  CHECK_FALSE(b.deadline());

  b.add({0, 64}, t0);
  b.add({1000, 64}, t0);
  CHECK_FALSE(b.due(t0));
  b.add({2000, 64}, t0);
  CHECK(b.due(t0));  // three separate ranges
  b.take();
  b.add({0, 1000}, t0);
  CHECK(b.due(t0));  // enough bytes
}
