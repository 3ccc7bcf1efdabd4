#include <riomesh/buffer_pool.hpp>

#include <doctest/doctest.h>

#include <sys/mman.h>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

using namespace riomesh;

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

TEST_CASE("buffer pool: slabs, ranges reused, nothing leaked") {
  buffer_pool pool(1 << 20);
  unsigned char* first = nullptr;
  {
    auto a = pool.allocate(1000);
    CHECK(a.where() == buffer::origin::pool);
    CHECK(a.size() == 1000);
    first = a.data();
    const auto* home = a.home_block();
    REQUIRE(home);  // the slab: what a send registers, once
    CHECK(home->base <= a.data());
    CHECK(home->length == 1 << 20);
    CHECK_FALSE(a.descriptor());  // anonymous memory
    CHECK(pool.stats().bytes_in_use == 1024);
  }
  CHECK(pool.stats().bytes_in_use == 0);
  CHECK(pool.allocate(10).data() == first);  // the range came back
  {
    auto big = pool.allocate(3 << 20);  // larger than a slab: a slab of its own
    CHECK(pool.stats().slabs == 2);
  }
  CHECK(pool.stats().slabs == 1);  // and it went with the buffer
  CHECK(pool.allocate(0).empty());
}

TEST_CASE("buffer pool: a buffer, and its slab, may outlive the pool") {
  buffer kept;
  std::weak_ptr<const void> slab;
  {
    buffer_pool pool(1 << 16);
    kept = pool.allocate(100);
    slab = kept.home_block()->keep;
  }
  std::memset(kept.data(), 1, kept.size());  // still valid (ASan would say otherwise)
  CHECK_FALSE(slab.expired());
  kept = buffer{};
  CHECK(slab.expired());
}

TEST_CASE("buffer pool: memfd slabs, each buffer's descriptor maps to its bytes") {
  buffer_pool pool(1 << 20, config::memory_provider::memfd);
  pool.allocate(3000);  // the next buffer starts inside the slab
  auto b = pool.allocate(10000);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<unsigned char>(i * 7);
  auto d = b.descriptor();
  REQUIRE(d);
  CHECK(d->second == static_cast<std::uint64_t>(b.data() - b.home_block()->base));
  // As another process would: map the descriptor, find the same bytes.
  auto page = d->second / 4096 * 4096;
  auto span = d->second - page + b.size();
  void* view = mmap(nullptr, span, PROT_READ, MAP_SHARED, d->first, static_cast<off_t>(page));
  REQUIRE(view != MAP_FAILED);
  CHECK(std::memcmp(static_cast<unsigned char*>(view) + (d->second - page), b.data(), b.size()) ==
        0);
  munmap(view, span);
  CHECK(b.slice(100, 10).descriptor()->second == d->second + 100);
}

TEST_CASE("buffer pool: allocations and drops from several threads keep the books") {
  buffer_pool pool(1 << 20);
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
