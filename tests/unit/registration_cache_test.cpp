#include <riomesh/channels/memory/registration_cache.hpp>

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

using namespace riomesh::channels;

namespace {

// Records what is registered; refuses on request; checks each deregistration
// matches a live registration exactly once.
struct fake_registrar : registrar {
  std::map<std::uint32_t, registration> live;
  std::uint32_t next_key = 1;
  int calls = 0;
  bool refuse = false;
  bool bad_deregister = false;

  std::optional<registration> register_range(std::uintptr_t base, std::size_t length) override {
    ++calls;
    if (refuse)
      return std::nullopt;
    registration r{base, length, next_key, next_key + 1000, nullptr};
    live[next_key++] = r;
    return r;
  }
  void deregister(const registration& r) override {
    auto it = live.find(r.lkey);
    if (it == live.end() || it->second.base != r.base)
      bad_deregister = true;
    else
      live.erase(it);
  }
};

const void* addr(std::uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

registration_cache::limits small(std::size_t entries, std::uint64_t bytes) {
  registration_cache::limits l;
  l.entries = entries;
  l.bytes = bytes;
  return l;
}

}  // namespace

TEST_CASE("registration cache: page-aligned, a covering registration is a hit") {
  fake_registrar f;
  registration_cache c(f, small(8, 1 << 20));
  auto a = c.acquire(addr(0x10010), 100);
  REQUIRE(a);
  CHECK(a->reg.base == 0x10000);
  CHECK(a->reg.length == 4096);
  c.unpin(a->id);
  auto b = c.acquire(addr(0x10800), 2048);  // inside the same page
  REQUIRE(b);
  CHECK(b->id == a->id);
  CHECK(c.stats().hits == 1);
  CHECK(c.stats().misses == 1);
  CHECK(f.calls == 1);
  c.unpin(b->id);
  CHECK_FALSE(c.acquire(addr(0x10000), 0));
}

TEST_CASE("registration cache: a larger buffer over a cached range replaces it") {
  fake_registrar f;
  registration_cache c(f, small(8, 1 << 20));
  auto a = c.acquire(addr(0x10000), 4096);
  c.unpin(a->id);
  auto b = c.acquire(addr(0x10000), 3 * 4096);
  REQUIRE(b);
  CHECK(b->reg.length == 3 * 4096);
  CHECK(c.entries() == 1);
  CHECK(f.live.size() == 1);  // the smaller one deregistered
  c.unpin(b->id);
  CHECK_FALSE(f.bad_deregister);
}

TEST_CASE("registration cache: least recently used unpinned entries go past the bounds") {
  fake_registrar f;
  registration_cache c(f, small(2, 1 << 20));
  auto a = c.acquire(addr(0x10000), 10);
  auto b = c.acquire(addr(0x20000), 10);
  c.unpin(a->id);
  c.unpin(b->id);
  c.unpin(c.acquire(addr(0x10000), 10)->id);  // a used again: b is now the oldest
  auto d = c.acquire(addr(0x30000), 10);
  CHECK(c.entries() == 2);
  CHECK(c.stats().evictions == 1);
  CHECK(c.acquire(addr(0x10000), 10)->id == a->id);  // a survived
  CHECK(c.stats().hits == 2);
  (void)d;
}

TEST_CASE("registration cache: pinned entries are never evicted, even past the bounds") {
  fake_registrar f;
  registration_cache c(f, small(1, 4096));
  auto a = c.acquire(addr(0x10000), 10);
  auto b = c.acquire(addr(0x20000), 10);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(c.entries() == 2);
  CHECK(f.live.size() == 2);
  c.unpin(a->id);
  c.unpin(b->id);
  c.acquire(addr(0x30000), 10);  // now the unpinned ones can go
  CHECK(c.entries() == 1);
  CHECK(f.live.size() == 1);
}

TEST_CASE("registration cache: invalidated memory is never found again") {
  fake_registrar f;
  registration_cache c(f, small(8, 1 << 20));
  auto a = c.acquire(addr(0x10000), 8192);
  c.invalidate(addr(0x11000), 1);  // pinned: deregistered at its last unpin
  CHECK(f.live.size() == 1);
  CHECK(c.entries() == 0);
  auto b = c.acquire(addr(0x10000), 10);  // a fresh registration
  REQUIRE(b);
  CHECK(b->id != a->id);
  c.unpin(a->id);
  CHECK(f.live.size() == 1);
  c.unpin(b->id);
  c.invalidate(addr(0x10000), 4096);
  CHECK(f.live.empty());
  CHECK_FALSE(f.bad_deregister);
}

TEST_CASE(
    "registration cache: a refusal after making room is counted once, and what is pinned "
    "still serves") {
  fake_registrar f;
  registration_cache c(f, small(8, 1 << 20));
  auto a = c.acquire(addr(0x10000), 10);
  REQUIRE(c.acquire(addr(0x40000), 10));
  c.unpin(a->id);
  f.refuse = true;
  CHECK_FALSE(c.acquire(addr(0x20000), 3 * 4096));
  CHECK(f.calls == 4);  // a, b, then the refused one twice
  CHECK(c.stats().failures == 1);
  CHECK(c.stats().evictions == 1);  // a: unused
  CHECK(c.entries() == 1);
  CHECK(c.acquire(addr(0x40000), 10));  // b, pinned, stays
  CHECK_FALSE(f.bad_deregister);
}

TEST_CASE("registration cache: everything is deregistered at the end") {
  fake_registrar f;
  {
    registration_cache c(f, small(8, 1 << 20));
    c.acquire(addr(0x10000), 10);
    c.unpin(c.acquire(addr(0x50000), 10)->id);
  }
  CHECK(f.live.empty());
  CHECK_FALSE(f.bad_deregister);
}

TEST_CASE("registration cache: random use, every lease covers its buffer, nothing leaks") {
  fake_registrar f;
  std::mt19937_64 rng(11);
  {
    registration_cache c(f, small(6, 64 * 4096));
    std::vector<std::uint64_t> pinned;
    for (int step = 0; step < 20000; ++step) {
      auto roll = rng() % 10;
      if (roll < 6) {
        std::uintptr_t at = 0x100000 + rng() % (256 * 4096);
        std::size_t n = 1 + rng() % (rng() % 4 ? 4096 : 16 * 4096);
        auto l = c.acquire(addr(at), n);
        REQUIRE(l);
        REQUIRE(l->reg.base <= at);
        REQUIRE(at + n <= l->reg.base + l->reg.length);
        REQUIRE(f.live.count(l->reg.lkey) == 1);
        pinned.push_back(l->id);
      } else if (roll < 9 && !pinned.empty()) {
        auto i = rng() % pinned.size();
        c.unpin(pinned[i]);
        pinned.erase(pinned.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        c.invalidate(addr(0x100000 + rng() % (256 * 4096)), 1 + rng() % 8192);
      }
      // Registered: what the cache holds plus retired ones still pinned.
      REQUIRE(f.live.size() <= c.entries() + pinned.size());
      if (pinned.empty())
        REQUIRE(c.entries() <= 6);
    }
    for (auto id : pinned)
      c.unpin(id);
    REQUIRE(f.live.size() == c.entries());
  }
  CHECK(f.live.empty());
  CHECK_FALSE(f.bad_deregister);
  CHECK(f.calls > 0);
}

namespace {

// Refuses what would take the live bytes past a bound, as a pinned-memory
// limit does.
struct bounded_registrar : fake_registrar {
  std::uint64_t bound = 0;
  std::optional<registration> register_range(std::uintptr_t base, std::size_t length) override {
    std::uint64_t in_use = 0;
    for (const auto& [key, r] : live)
      in_use += r.length;
    if (in_use + length > bound) {
      ++calls;
      return std::nullopt;
    }
    return fake_registrar::register_range(base, length);
  }
};

}  // namespace

TEST_CASE(
    "registration cache: a refused registration makes room from unused entries, the "
    "overlapped one included, and tries once more") {
  bounded_registrar f;
  f.bound = 3 * 4096;
  registration_cache c(f, small(8, 1 << 20));
  auto a = c.acquire(addr(0x10000), 2 * 4096);  // pages 0x10000, 0x11000
  REQUIRE(a);
  // Pinned, `a` stays: a range overlapping it cannot grow past the bound.
  CHECK_FALSE(c.acquire(addr(0x11000), 2 * 4096));
  CHECK(c.stats().failures == 1);
  c.unpin(a->id);
  // Unused now: it goes, and the new range is registered alone, not grown
  // over it.
  auto b = c.acquire(addr(0x11000), 2 * 4096);
  REQUIRE(b);
  CHECK(b->reg.base == 0x11000);
  CHECK(b->reg.length == 2 * 4096);
  CHECK(c.stats().evictions == 1);
  CHECK(c.entries() == 1);
  CHECK(f.live.size() == 1);
  c.unpin(b->id);
  CHECK_FALSE(f.bad_deregister);
}

TEST_CASE("registration cache: trimming gives back what sat unused, never what is pinned") {
  fake_registrar f;
  registration_cache c(f, small(8, 1 << 20));
  auto a = c.acquire(addr(0x10000), 10);
  auto b = c.acquire(addr(0x20000), 10);
  REQUIRE(a);
  REQUIRE(b);
  c.unpin(a->id);
  auto later = registration_cache::clock::now() + std::chrono::seconds(1);
  CHECK(c.trim(registration_cache::clock::now() - std::chrono::seconds(1)) == 0);  // too recent
  CHECK(c.trim(later) == 1);  // a: unused; b: pinned
  CHECK(c.stats().trimmed == 1);
  CHECK(c.entries() == 1);
  CHECK(f.live.size() == 1);
  c.unpin(b->id);
  CHECK(c.trim(later) == 1);
  CHECK(f.live.empty());
  CHECK_FALSE(f.bad_deregister);
}
