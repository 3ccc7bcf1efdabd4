#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/node/admission.hpp>

#include <doctest/doctest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace riomesh::actors;

namespace {

bool eventually(const std::function<bool()>& f) {
  for (int i = 0; i < 500; ++i) {
    if (f())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

void signal(int fd) {
  std::uint64_t one = 1;
  REQUIRE(::write(fd, &one, sizeof one) == sizeof one);
}

void drain(int fd) {
  std::uint64_t v = 0;
  REQUIRE(::read(fd, &v, sizeof v) == sizeof v);
}

}  // namespace

TEST_CASE("io loop: one call per readiness, quiet until rearmed") {
  io_loop loop;
  int fd = eventfd(0, EFD_NONBLOCK);
  std::atomic<int> calls{0};
  REQUIRE(loop.watch(fd, [&] { ++calls; }));
  signal(fd);
  CHECK(eventually([&] { return calls == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(calls == 1);  // still readable, but one-shot: no storm
  drain(fd);
  loop.rearm(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(calls == 1);  // nothing new
  signal(fd);
  CHECK(eventually([&] { return calls == 2; }));
  loop.unwatch(fd);
  CHECK(loop.watched() == 0);
  ::close(fd);
}

TEST_CASE("io loop: readiness before rearm is not lost") {
  io_loop loop;
  int fd = eventfd(0, EFD_NONBLOCK);
  std::atomic<int> calls{0};
  REQUIRE(loop.watch(fd, [&] { ++calls; }));
  signal(fd);
  CHECK(eventually([&] { return calls == 1; }));
  signal(fd);  // arrives while the owner is still busy with the first
  loop.rearm(fd);
  CHECK(eventually([&] { return calls == 2; }));
  loop.unwatch(fd);
  ::close(fd);
}

TEST_CASE("io loop: many fds, and no callback after unwatch returns") {
  io_loop loop;
  std::vector<int> fds;
  std::atomic<int> calls{0};
  for (int i = 0; i < 20; ++i) {
    fds.push_back(eventfd(0, EFD_NONBLOCK));
    REQUIRE(loop.watch(fds.back(), [&] { ++calls; }));
  }
  for (int fd : fds)
    signal(fd);
  CHECK(eventually([&] { return calls == 20; }));
  for (int fd : fds) {
    loop.rearm(fd);  // still readable: fires again
    loop.unwatch(fd);
  }
  int after = calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(calls == after);
  CHECK_FALSE(loop.watch(-1, [] {}));
  for (int fd : fds)
    ::close(fd);
}

TEST_CASE("io loop: a persistent watch is called at each readiness, without rearm") {
  io_loop loop;
  int fd = eventfd(0, EFD_NONBLOCK);
  std::atomic<int> calls{0};
  REQUIRE(loop.watch(
      fd,
      [&] {
        drain(fd);  // the callback takes what made it readable
        ++calls;
      },
      false));
  signal(fd);
  CHECK(eventually([&] { return calls == 1; }));
  signal(fd);
  CHECK(eventually([&] { return calls == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(calls == 2);  // drained: quiet
  loop.unwatch(fd);
  ::close(fd);
}

TEST_CASE("io loop: a callback may unwatch another fd (a connection closed from a listener's)") {
  io_loop loop;
  int a = eventfd(0, EFD_NONBLOCK), b = eventfd(0, EFD_NONBLOCK);
  std::atomic<int> b_calls{0};
  std::atomic<bool> done{false};
  REQUIRE(loop.watch(b, [&] { ++b_calls; }));
  REQUIRE(loop.watch(a, [&] {
    loop.unwatch(b);  // on the loop's thread, inside a callback: no wait
    done = true;
  }));
  signal(a);
  CHECK(eventually([&] { return done.load(); }));
  signal(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(b_calls == 0);
  CHECK(loop.watched() == 1);
  loop.unwatch(a);
  ::close(a);
  ::close(b);
}

TEST_CASE("io loop: tasks posted from other threads run on its thread, in order") {
  io_loop loop;
  std::mutex lock;
  std::vector<int> order;
  std::atomic<bool> on_thread{true};
  std::vector<std::thread> posters;
  for (int t = 0; t < 4; ++t)
    posters.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i)
        loop.post([&, t, i] {
          on_thread = on_thread && loop.on_io_thread();
          std::lock_guard<std::mutex> g(lock);
          order.push_back(t * 1000 + i);
        });
    });
  for (auto& p : posters)
    p.join();
  CHECK(eventually([&] {
    std::lock_guard<std::mutex> g(lock);
    return order.size() == 400;
  }));
  CHECK(on_thread);
  int last[4] = {-1, -1, -1, -1};
  for (int v : order) {
    CHECK(v % 1000 > last[v / 1000]);  // each poster's own order holds
    last[v / 1000] = v % 1000;
  }
}

TEST_CASE("io loop: it sleeps when idle, and the doorbell wakes it") {
  io_loop loop(std::chrono::microseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto before = loop.stats();
  std::atomic<int> ran{0};
  for (int i = 0; i < 20; ++i) {
    loop.post([&] { ++ran; });
    CHECK(eventually([&] { return ran == i + 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep again
  }
  auto after = loop.stats();
  // Each post found it asleep and rang; nothing spun meanwhile.
  CHECK(after.doorbells - before.doorbells >= 15);
  CHECK(after.wakes - before.wakes >= 15);
}

TEST_CASE("admission: the oldest in setup makes room, its own address's first when it holds half") {
  admission a(4);
  CHECK_FALSE(a.make_room("10.0.0.1"));
  a.accepted(1, "10.0.0.1");
  a.accepted(2, "10.0.0.2");
  CHECK_FALSE(a.make_room("10.0.0.1"));
  a.accepted(3, "10.0.0.1");
  // 10.0.0.1 holds half: its own oldest goes for its newcomer...
  CHECK(a.make_room("10.0.0.1") == std::optional<std::uint64_t>{1});
  // ...while another address still has room.
  CHECK_FALSE(a.make_room("10.0.0.3"));
  a.accepted(4, "10.0.0.3");
  // All four slots taken: the address holding the most pays, its oldest.
  CHECK(a.make_room("10.0.0.9") == std::optional<std::uint64_t>{1});
  CHECK(a.left(1));
  CHECK_FALSE(a.left(1));
  CHECK(a.make_room("10.0.0.9") == std::nullopt);
  CHECK(a.in_setup() == 3);
  CHECK(a.from("10.0.0.1") == 1);
}

TEST_CASE("admission: a flood from many addresses closes its own, never a lone newcomer") {
  admission a(64);
  std::uint64_t id = 0;
  auto flood = [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      auto host = "127.0.0." + std::to_string(2 + i % 8);
      if (auto victim = a.make_room(host))
        a.left(*victim);
      a.accepted(++id, host);
    }
  };
  flood(64);
  // An honest node from an address of its own comes in, and stays while
  // the flood goes on: each newcomer closes one of the flood's.
  auto honest_victim = a.make_room("127.0.0.1");
  REQUIRE(honest_victim);
  CHECK(*honest_victim <= 64);
  a.left(*honest_victim);
  a.accepted(1u << 30, "127.0.0.1");
  flood(20000);
  CHECK(a.from("127.0.0.1") == 1);
  CHECK(a.in_setup() == 64);
  CHECK(a.left(1u << 30));
}
