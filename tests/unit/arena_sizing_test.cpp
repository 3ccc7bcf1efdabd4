// The parts of an arena sized by demand, each alone: the sender's view of
// the peer's segments, the receiver's own, its sizing policy, the steps on
// the wire and the budget's books.
#include <riomesh/actors/connection/send_queue.hpp>
#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/placement/arena_sizing.hpp>
#include <riomesh/actors/placement/arena_steps.hpp>
#include <riomesh/actors/placement/own_arena.hpp>
#include <riomesh/actors/placement/peer_arena.hpp>
#include <riomesh/actors/placement/segment_pool.hpp>

#include <doctest/doctest.h>

using namespace riomesh::actors;
using namespace std::chrono_literals;

TEST_CASE("peer arena: new space goes to the segment moved to, old space comes back") {
  peer_arena a(1024);
  auto x = a.allocate(512);
  REQUIRE(x);
  CHECK(*x == 0);
  // Offsets are never reused: a move must lie past every segment so far.
  CHECK_FALSE(a.move_to(512, 4096, arena_span));
  CHECK_FALSE(a.move_to(2048, 0, arena_span));
  CHECK_FALSE(a.move_to(2048 + 1, 4096, arena_span));  // not aligned
  CHECK_FALSE(a.move_to(arena_span - 64, 4096, arena_span));
  REQUIRE(a.move_to(2048, 4096, arena_span));
  CHECK(a.current_size() == 4096);
  CHECK(a.retiring() == 1);
  auto y = a.allocate(1024);
  REQUIRE(y);
  CHECK(*y == 2048);
  // The old segment's space is still the peer's to give back, once.
  CHECK_FALSE(a.release(512, 512));
  CHECK(a.release(0, 512));
  CHECK(a.retiring() == 0);  // all of it back: forgotten
  CHECK_FALSE(a.release(0, 512));
  CHECK(a.release(2048, 1024));
  CHECK(a.free_bytes() == 4096);
  CHECK_FALSE(a.release(2048 + 4096, 64));
}

TEST_CASE("peer arena: a segment moved from with nothing in it is forgotten at once") {
  peer_arena a(1024);
  REQUIRE(a.move_to(1088, 512, arena_span));
  CHECK(a.retiring() == 0);
  CHECK_FALSE(a.release(0, 64));
  CHECK(a.next_offset() == 1088 + 512);
}

TEST_CASE("own arena: a buffer must lie wholly within one segment") {
  own_arena o;
  o.add({0, 1024, nullptr, nullptr, -1});
  CHECK(o.next_offset() == 1024 + 64);  // a gap: no release spans two
  o.add({o.next_offset(), 4096, nullptr, nullptr, -1});
  CHECK(o.holding(0, 1024));
  CHECK_FALSE(o.holding(1000, 100));  // across the gap
  CHECK_FALSE(o.holding(1024, 1));    // in the gap
  CHECK(o.holding(1088, 4096));
  CHECK_FALSE(o.holding(1088, 4097));
  CHECK_FALSE(o.holding(~0ull, 2));  // no overflow
  CHECK(o.in_current(1088));
  CHECK_FALSE(o.in_current(0));
  CHECK(o.held_bytes() == 1024 + 4096);
  CHECK_FALSE(o.remove(1088));  // the current one stays
  CHECK(o.remove(0));
  CHECK_FALSE(o.holding(0, 1));
  CHECK(o.segments() == 1);
}

TEST_CASE("arena sizing: a want quadruples the arena, or makes room for twice what did not fit") {
  arena_sizing s({256 << 10, 64 << 20, 1s});
  CHECK(s.on_want(1000, 256 << 10) == std::optional<std::uint64_t>(1 << 20));
  CHECK(s.on_want(3 << 20, 256 << 10) == std::optional<std::uint64_t>(8 << 20));
  CHECK(s.on_want(100 << 20, 256 << 10) == std::optional<std::uint64_t>(64 << 20));  // the cap
  CHECK_FALSE(s.on_want(1, 64 << 20));
}

TEST_CASE("arena sizing: an arena used to a quarter for a period shrinks to twice its use") {
  auto t0 = arena_sizing::clock::time_point{};
  arena_sizing s({256 << 10, 64 << 20, 1s}, t0);
  std::uint64_t unbounded = ~0ull;
  s.used(5 << 20);
  CHECK_FALSE(s.on_tick(t0 + 500ms, 16 << 20, 0, unbounded));  // not a period yet
  CHECK_FALSE(s.on_tick(t0 + 1s, 16 << 20, 0, unbounded));     // 5 MiB of 16: more than a quarter
  // 1 MiB at most in the next period: 2 MiB; then nothing: the first size.
  s.used(1 << 20);
  CHECK(s.on_tick(t0 + 2s, 16 << 20, 0, unbounded) == std::optional<std::uint64_t>(2 << 20));
  s.moved(t0 + 2s, 0);
  CHECK(s.on_tick(t0 + 3s, 2 << 20, 0, unbounded) == std::optional<std::uint64_t>(256 << 10));
  CHECK_FALSE(s.on_tick(t0 + 10s, 256 << 10, 0, unbounded));
}

TEST_CASE("arena sizing: a busy arena above its fair share shrinks to it") {
  auto t0 = arena_sizing::clock::time_point{};
  arena_sizing s({256 << 10, 64 << 20, 1s}, t0);
  s.used(60 << 20);
  CHECK(s.on_tick(t0 + 1s, 64 << 20, 60 << 20, 5 << 20) == std::optional<std::uint64_t>(4 << 20));
  CHECK(s.on_tick(t0 + 2s, 1 << 20, 1 << 20, 1000) == std::optional<std::uint64_t>(256 << 10));
}

TEST_CASE("arena steps: each kind reads back, a wrong size or kind is named") {
  for (auto k : {arena_step::kind::want, arena_step::kind::moved, arena_step::kind::left,
                 arena_step::kind::kept}) {
    std::string error;
    auto e = encode_step({k, 1ull << 40, 77});
    CHECK(e.kind == envelope_kind::arena);
    auto s = decode_step(e, error);
    REQUIRE(s);
    CHECK(s->what == k);
    CHECK(s->a == 1ull << 40);
    CHECK(s->b == 77);
  }
  std::string error;
  auto e = encode_step({});
  e.body[0] = 0;
  CHECK_FALSE(decode_step(e, error));
  CHECK(error == "an arena step of unknown kind 0");
  e.body.pop_back();
  CHECK_FALSE(decode_step(e, error));
  CHECK(error == "an arena step of 16 bytes");
}

TEST_CASE("receive budget: arenas grow within it, shrinking always may, and shares split it") {
  session_registry::limits l;
  l.arena_budget = 10 << 20;
  auto r = std::make_shared<session_registry>(l);
  auto t1 = r->open(), t2 = r->open();
  session_registry::claim c;
  c.peer = "a";
  c.arena = 1 << 20;
  REQUIRE(r->ask(t1, c).v == session_registry::verdict::granted);
  c.peer = "b";
  REQUIRE(r->ask(t2, c).v == session_registry::verdict::granted);
  CHECK(r->fair_share() == 5 << 20);
  session_budget b1(r, t1);
  CHECK(b1.take(6 << 20, false));
  CHECK_FALSE(b1.take(4 << 20, false));  // 8 + 4 > 10
  CHECK(b1.take(4 << 20, true));         // a segment to shrink into
  CHECK(r->arena_bytes() == 12 << 20);
  b1.give(10 << 20);
  CHECK(r->arena_bytes() == 2 << 20);
  r->ended(t1);
  b1.give(1 << 20);  // a view outlived its session: not counted twice
  CHECK(r->arena_bytes() == 1 << 20);
  CHECK(r->fair_share() == 10 << 20);
  CHECK_FALSE(b1.take(1, false));  // an ended session grows no more
}

TEST_CASE("send queue: the head is replaced by its parts, in order") {
  send_queue<int> q;
  for (int i = 0; i < 3; ++i)
    q.push_back(int{i});
  q.pop_front();
  q.replace_front({10, 11, 12});
  std::vector<int> got;
  while (!q.empty()) {
    got.push_back(q.front());
    q.pop_front();
  }
  CHECK(got == std::vector<int>{10, 11, 12, 2});
  q.push_back(5);
  q.replace_front({});
  CHECK(q.empty());
}

TEST_CASE(
    "segment pool: a segment given up is reused, cleared for another peer, within its bound") {
  auto pool = segment_pool::make({}, 1 << 20);
  std::string error;
  unsigned char* first = nullptr;
  {
    auto seg = pool->take(256 << 10, "a", error);
    REQUIRE(seg.data);
    first = seg.data;
    seg.data[100] = 42;
  }  // its last holder let go: kept
  CHECK(pool->stats().kept_bytes == 256 << 10);
  {
    auto again = pool->take(256 << 10, "a", error);
    CHECK(again.data == first);
    CHECK(again.data[100] == 42);  // its own peer's bytes, as they were
  }
  {
    auto other = pool->take(256 << 10, "b", error);
    CHECK(other.data == first);
    CHECK(other.data[100] == 0);  // another peer's: cleared
    auto fresh = pool->take(256 << 10, "b", error);
    CHECK(fresh.data != first);
  }
  auto s = pool->stats();
  CHECK(s.made == 2);
  CHECK(s.reused == 2);
  CHECK(s.cleared == 1);
  CHECK(s.kept_bytes == 512 << 10);
  { auto big = pool->take(1 << 20, "a", error); }  // past the bound: freed
  CHECK(pool->stats().kept_bytes == 512 << 10);
  pool->trim(std::chrono::steady_clock::now() + 10s);
  CHECK(pool->stats().kept_bytes == 0);
}
