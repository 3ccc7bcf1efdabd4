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

namespace {

// Bytes 0, 1, 2, ... of `n`, from `first` on.
buffer counting(std::size_t n, unsigned char first) {
  auto b = buffer::heap(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>(first + i);
  return b;
}

}  // namespace

TEST_CASE("scatter-gather: a gathered buffer is its pieces in order, copied only by flatten") {
  auto a = counting(5, 0), b = counting(3, 5), c = counting(7, 8);
  auto g = buffer::gather({a, buffer{}, b, c});
  CHECK(g.gathered());
  CHECK(g.where() == buffer::origin::gathered);
  CHECK(g.size() == 15);
  CHECK(g.data() == nullptr);               // not contiguous here
  REQUIRE(g.pieces().size() == 3);          // the empty piece left out
  CHECK(g.pieces()[0].data() == a.data());  // the pieces themselves, not copies
  CHECK(g.pieces()[2].data() == c.data());
  auto flat = g.flatten();
  CHECK(flat.where() == buffer::origin::copy);
  for (std::size_t i = 0; i < flat.size(); ++i)
    CHECK(flat[i] == i);
  // A gathered piece gives its pieces; one piece is that piece; none, empty.
  auto nested = buffer::gather({g, counting(1, 15)});
  CHECK(nested.pieces().size() == 4);
  CHECK(nested.size() == 16);
  CHECK(buffer::gather({b}).data() == b.data());
  CHECK_FALSE(buffer::gather({b}).gathered());
  CHECK(buffer::gather({}).empty());
  CHECK(buffer::gather({buffer{}, buffer{}}).where() == buffer::origin::none);
  CHECK(a.pieces().empty());
  CHECK(a.flatten().data() == a.data());
}

TEST_CASE("scatter-gather: a slice of a gathered buffer spans the pieces it covers") {
  auto g = buffer::gather({counting(5, 0), counting(3, 5), counting(7, 8)});
  for (std::size_t from = 0; from < 15; ++from)
    for (std::size_t n = 1; from + n <= 15; ++n) {
      CAPTURE(from);
      CAPTURE(n);
      auto s = g.slice(from, n).flatten();
      REQUIRE(s.size() == n);
      bool same = true;
      for (std::size_t i = 0; i < n; ++i)
        same = same && s[i] == from + i;
      CHECK(same);
    }
  auto middle = g.slice(4, 5);  // the last byte of the first piece to the third's first two
  REQUIRE(middle.pieces().size() == 3);
  CHECK(middle.pieces()[1].size() == 3);
  CHECK_FALSE(g.slice(5, 3).gathered());  // exactly the second piece
  CHECK(g.slice(3, 0).empty());
}
