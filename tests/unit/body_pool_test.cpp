// Envelope bodies kept per thread (body_pool.hpp).
#include <riomesh/actors/envelope/body_pool.hpp>

#include <doctest/doctest.h>

#include <thread>

using namespace riomesh::actors;

TEST_CASE("body pool: a body given back is taken again, empty, with its room, on its own thread") {
  while (body_pool::take().capacity() > 0) {
  }  // what earlier cases on this thread left
  CHECK(body_pool::take().capacity() == 0);
  std::vector<unsigned char> body(100, 7);
  auto* storage = body.data();
  body_pool::give(std::move(body));
  std::thread([] { CHECK(body_pool::take().capacity() == 0); }).join();  // not another's
  auto again = body_pool::take();
  CHECK(again.empty());
  CHECK(again.capacity() >= 100);
  CHECK(again.data() == storage);
  CHECK(body_pool::take().capacity() == 0);
}

TEST_CASE("body pool: large bodies are freed, and at most `kept` are kept") {
  while (body_pool::take().capacity() > 0) {
  }
  body_pool::give(std::vector<unsigned char>(body_pool::largest + 1));
  CHECK(body_pool::take().capacity() == 0);
  body_pool::give(std::vector<unsigned char>{});  // no room: nothing to keep
  CHECK(body_pool::take().capacity() == 0);
  for (std::size_t i = 0; i < body_pool::kept + 10; ++i)
    body_pool::give(std::vector<unsigned char>(8));
  std::size_t taken = 0;
  while (body_pool::take().capacity() > 0)
    ++taken;
  CHECK(taken == body_pool::kept);
}
