// The holder's bookkeeping of grant uses: bounded per connection, ended by
// the answer on the connection it went on, all of a connection's ended
// with it; reads waiting for a map slot kept in order.
#include <riomesh/actors/grants/grant_uses.hpp>

#include <doctest/doctest.h>

using namespace riomesh;
using namespace riomesh::actors;

namespace {

grant_wait on(std::uint64_t link, bool read = false) {
  grant_wait w;
  w.owner = "node-b";
  w.link = link;
  if (read)
    w.into_map = 0x1000 + link;
  return w;
}

parked_read read_op(std::uint64_t op) {
  parked_read r;
  r.op = op;
  return r;
}

}  // namespace

TEST_CASE("grant uses: an answer ends the use it names, only on the connection it went on") {
  grant_uses u;
  auto a = u.next_op(), b = u.next_op();
  CHECK(b != a);
  REQUIRE(u.add(a, on(1)));
  REQUIRE(u.add(b, on(2)));
  CHECK_FALSE(u.take(a, 2));  // another connection's answer names nothing of ours
  CHECK(u.size() == 2);
  auto w = u.take(a, 1);
  REQUIRE(w);
  CHECK(w->owner == "node-b");
  CHECK_FALSE(u.take(a, 1));  // answered once
  CHECK(u.size() == 1);
}

TEST_CASE("grant uses: at most max_grant_uses in flight per connection, freed as they end") {
  grant_uses u;
  for (std::uint64_t op = 1; op <= max_grant_uses; ++op)
    REQUIRE(u.add(op, on(7)));
  CHECK_FALSE(u.add(max_grant_uses + 1, on(7)));
  CHECK(u.add(max_grant_uses + 2, on(8)));  // other connections are not held back
  REQUIRE(u.take(3, 7));
  CHECK(u.add(max_grant_uses + 3, on(7)));
  CHECK(u.size() == max_grant_uses + 1);
}

TEST_CASE("grant uses: reads in flight counted per connection, a fetched value kept") {
  grant_uses u;
  REQUIRE(u.add(1, on(4, true)));
  REQUIRE(u.add(2, on(4, true)));
  REQUIRE(u.add(3, on(4)));
  REQUIRE(u.add(4, on(5, true)));
  CHECK(u.reads_in_flight(4) == 2);
  CHECK(u.reads_in_flight(5) == 1);
  CHECK(u.reads_in_flight(6) == 0);
  u.note_fetched(3, 42);
  u.note_fetched(99, 1);  // none such: nothing
  REQUIRE(u.take(1, 4));
  CHECK(u.reads_in_flight(4) == 1);
  auto w = u.take(3, 4);
  REQUIRE(w);
  CHECK(w->fetched == 42);
  CHECK(u.reads_in_flight(4) == 1);
}

TEST_CASE("grant uses: a connection's end ends every use on it, and frees its bound") {
  grant_uses u;
  for (std::uint64_t op = 1; op <= max_grant_uses; ++op)
    REQUIRE(u.add(op, on(op % 2 == 0 ? 2 : 3, op % 4 == 0)));
  auto ended = u.drop_link(2);
  CHECK(ended.size() == max_grant_uses / 2);
  for (auto& [op, w] : ended)
    CHECK(w.link == 2);
  CHECK(u.size() == max_grant_uses / 2);
  CHECK(u.reads_in_flight(2) == 0);
  CHECK_FALSE(u.take(2, 2));
  CHECK(u.take(1, 3));
  CHECK(u.drop_link(2).empty());
  CHECK(u.add(1000, on(2)));
}

TEST_CASE("parked reads: in order per connection, bounded, dropped with their connection") {
  parked_reads p;
  CHECK_FALSE(p.waiting(1));
  CHECK_FALSE(p.pop_front(1));
  REQUIRE(p.push_back(1, read_op(10)));
  REQUIRE(p.push_back(1, read_op(11)));
  REQUIRE(p.push_back(2, read_op(20)));
  CHECK(p.waiting(1));
  CHECK(p.size(1) == 2);
  auto first = p.pop_front(1);
  REQUIRE(first);
  CHECK(first->op == 10);
  REQUIRE(p.push_front(1, std::move(*first)));  // still no slot: first again
  CHECK(p.pop_front(1)->op == 10);
  CHECK(p.pop_front(1)->op == 11);
  CHECK_FALSE(p.waiting(1));
  for (std::uint64_t op = 0; op < max_grant_uses - 1; ++op)
    REQUIRE(p.push_back(2, read_op(op)));
  CHECK_FALSE(p.push_back(2, read_op(999)));
  CHECK_FALSE(p.push_front(2, read_op(999)));
  auto dropped = p.drop_link(2);
  CHECK(dropped.size() == max_grant_uses);
  CHECK(dropped.front().op == 20);
  CHECK_FALSE(p.waiting(2));
}
