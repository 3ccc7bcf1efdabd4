// Ranges of user memory going away reach every live subscriber, from any
// thread, and dropping a wrapped buffer publishes its range.
#include <riomesh/buffer.hpp>
#include <riomesh/channels/memory/invalidation_bus.hpp>

#include <doctest/doctest.h>

#include <thread>

using namespace riomesh;
using namespace riomesh::channels;

TEST_CASE("invalidation bus: every live inbox hears of every range, once") {
  invalidation_bus bus;
  auto a = bus.subscribe();
  auto b = bus.subscribe();
  int x = 0, y = 0;
  bus.publish(&x, sizeof x);
  b.reset();  // a dead subscriber is dropped, not an error
  std::thread other([&] { bus.publish(&y, sizeof y); });
  other.join();
  auto got = a->take();
  REQUIRE(got.size() == 2);
  CHECK(got[0].first == reinterpret_cast<std::uintptr_t>(&x));
  CHECK(got[1].first == reinterpret_cast<std::uintptr_t>(&y));
  CHECK(got[1].second == sizeof y);
  CHECK(a->take().empty());
}

TEST_CASE("invalidation bus: the last drop of a wrapped buffer publishes its range first") {
  auto inbox = invalidation_bus::global().subscribe();
  inbox->take();
  std::vector<unsigned char> mine(100);
  bool published_before_release = false;
  {
    auto b = buffer::wrap(mine.data(), mine.size(), [&] {
      for (auto& [at, n] : inbox->take())
        published_before_release |=
            at == reinterpret_cast<std::uintptr_t>(mine.data()) && n == mine.size();
    });
    auto copy = b;
  }
  CHECK(published_before_release);
}
