// The connection's queue of messages to send: first in, first out, across
// growth and the compaction that keeps its storage from creeping.
#include <riomesh/actors/connection/send_queue.hpp>

#include <doctest/doctest.h>

#include <memory>

using riomesh::actors::send_queue;

TEST_CASE("send queue: first in, first out, through growth and compaction") {
  send_queue<std::unique_ptr<int>> q;
  CHECK(q.empty());
  int next_in = 0, next_out = 0;
  // Uneven pushes and pops: the head passes the compaction point many times.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7 + round % 5; ++i)
      q.push_back(std::make_unique<int>(next_in++));
    for (int i = 0; i < 5 + round % 4 && !q.empty(); ++i) {
      REQUIRE(*q.front() == next_out++);
      q.pop_front();
    }
    CHECK(q.size() == static_cast<std::size_t>(next_in - next_out));
  }
  while (!q.empty()) {
    REQUIRE(*q.front() == next_out++);
    q.pop_front();
  }
  CHECK(next_out == next_in);
}

TEST_CASE("send queue: a popped element is destroyed at once") {
  send_queue<std::shared_ptr<int>> q;
  auto watched = std::make_shared<int>(1);
  q.push_back(std::shared_ptr<int>(watched));
  q.push_back(std::make_shared<int>(2));
  CHECK(watched.use_count() == 2);
  q.pop_front();
  CHECK(watched.use_count() == 1);  // not kept until its slot is reused
  CHECK(*q.front() == 2);
}
