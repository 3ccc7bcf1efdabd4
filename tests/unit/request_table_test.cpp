// The request table alone: an answer counts only from the peer asked, once,
// and only answers go into the latency histogram; a lost peer's waits come
// back, others stay; callers on several threads at once lose none.
#include <riomesh/actors/requests/request_table.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace riomesh::actors;

namespace {

request_wait sent_at(request_table::clock::time_point t) {
  request_wait w;
  w.mid = caf::make_message_id().with_high_priority();
  w.sent = t;
  return w;
}

}  // namespace

TEST_CASE("request table: answered once, by the peer asked, and timed") {
  request_table t;
  auto t0 = request_table::clock::now();
  auto a = t.add("node-b", sent_at(t0));
  auto b = t.add("node-c", sent_at(t0));
  CHECK(a != b);
  CHECK_FALSE(t.answered("node-c", a, t0));  // another peer cannot answer it
  auto w = t.answered("node-b", a, t0 + std::chrono::microseconds(30));
  REQUIRE(w);
  CHECK(w->sent == t0);
  CHECK_FALSE(t.answered("node-b", a, t0));  // once
  auto h = t.latency();
  CHECK(h.count == 1);
  CHECK(h.sum * 1e6 == doctest::Approx(30));
  CHECK(t.take("node-c", b));  // failed unsent: not a round trip
  CHECK(t.latency().count == 1);
  CHECK(t.size() == 0);
}

TEST_CASE("request table: a lost peer's waits come back, the others stay") {
  request_table t;
  auto now = request_table::clock::now();
  for (int i = 0; i < 3; ++i)
    t.add("node-b", sent_at(now));
  auto c = t.add("node-c", sent_at(now));
  CHECK(t.take_all("node-b").size() == 3);
  CHECK(t.size() == 1);
  CHECK(t.answered("node-c", c, now));
  t.add("node-d", sent_at(now));
  CHECK(t.take_all().size() == 1);
  CHECK(t.size() == 0);
}

TEST_CASE("request table: added and answered from two threads at once, none lost") {
  request_table t;
  constexpr int n = 20000;
  std::vector<std::uint64_t> ids(n);
  std::atomic<int> added{0};
  std::thread adder([&] {
    for (int i = 0; i < n; ++i) {
      ids[static_cast<std::size_t>(i)] = t.add("node-b", sent_at(request_table::clock::now()));
      added.store(i + 1, std::memory_order_release);
    }
  });
  int answered = 0;
  for (int i = 0; i < n; ++i) {
    while (added.load(std::memory_order_acquire) <= i)
      std::this_thread::yield();
    if (t.answered("node-b", ids[static_cast<std::size_t>(i)], request_table::clock::now()))
      ++answered;
  }
  adder.join();
  CHECK(answered == n);
  CHECK(t.size() == 0);
  CHECK(t.latency().count == static_cast<std::uint64_t>(n));
}
