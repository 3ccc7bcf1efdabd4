#include <riomesh/actors/progress/progress_loop.hpp>

#include <doctest/doctest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

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

TEST_CASE("progress loop: one call per readiness, quiet until rearmed") {
  progress_loop loop;
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

TEST_CASE("progress loop: readiness before rearm is not lost") {
  progress_loop loop;
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

TEST_CASE("progress loop: many fds, and no callback after unwatch returns") {
  progress_loop loop;
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
