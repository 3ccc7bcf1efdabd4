// The connection logic between two real channels (tcp over loopback, or
// rdma in the VM: channel_pair.hpp), in one process: buffers placed into the peer's arena, flow
// control by arena space, batched releases, and a peer that lies about releases.
#include <riomesh/actors/connection/connection_core.hpp>
#include "channel_pair.hpp"
#include "core_pair.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>

using namespace riomesh;
using namespace riomesh::actors;
using namespace riomesh::channels;
using namespace riomesh::test;

TEST_CASE("connection: buffers land in the peer's arena, in order, before their envelope") {
  test::linked_channels p;
  std::vector<unsigned char> arena_a(1 << 20), arena_b(1 << 20);
  connection_core a(*p.a, arena_a.data(), with_arenas(1 << 20, 1 << 20));
  connection_core b(*p.b, arena_b.data(), with_arenas(1 << 20, 1 << 20));
  const unsigned count = 50;
  for (unsigned i = 0; i < count; ++i) {
    std::vector<buffer> placed;
    for (unsigned k = 0; k < i % 3; ++k)
      placed.push_back(pattern(1 + (i * 977 + k * 4099) % 60000, i * 10 + k));
    REQUIRE(a.submit(message(i, std::move(placed))) == connection_core::submit_status::queued);
  }
  std::vector<std::uint64_t> got;  // ids only: dropping the views frees the arena
  bool ok = run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      // Checked on arrival: the envelope never comes before its bytes.
      unsigned i = static_cast<unsigned>(m.env.request_id);
      REQUIRE(m.placed.size() == i % 3);
      for (unsigned k = 0; k < m.placed.size(); ++k) {
        CHECK(matches(m.placed[k], 1 + (i * 977 + k * 4099) % 60000, i * 10 + k));
        CHECK(m.placed[k].where() == buffer::origin::arena);
        CHECK(m.placed[k].data() >= arena_b.data());
        CHECK(m.placed[k].data() < arena_b.data() + arena_b.size());
      }
      got.push_back(m.env.request_id);
    }
    return got.size() == count;
  });
  REQUIRE(ok);
  for (unsigned i = 0; i < count; ++i)
    CHECK(got[i] == i);
  CHECK(a.stats().messages_out == count);
  CHECK(b.stats().messages_in == count);
  CHECK(a.stats().bytes_placed_out == b.stats().bytes_placed_in);
  CHECK(b.stats().inline_bytes_in == 2 * count);  // only the bodies went inline
}

TEST_CASE("connection: a full arena stalls the sender until the receiver lets go") {
  test::linked_channels p;
  std::vector<unsigned char> arena_a(4096), arena_b(64 * 1024);
  connection_core a(*p.a, arena_a.data(), with_arenas(4096, 64 * 1024));
  connection_core b(*p.b, arena_b.data(), with_arenas(64 * 1024, 4096));
  for (unsigned i = 0; i < 6; ++i)
    REQUIRE(a.submit(message(i, {pattern(40000, i)})) == connection_core::submit_status::queued);
  std::vector<inbound_message> held;
  bool ok = run(p, a, b, [&] {
    for (auto& m : b.take_inbound())
      held.push_back(std::move(m));
    return held.size() == 1 && a.stats().credit_stalls > 0;
  });
  REQUIRE(ok);
  // Only one 40000-byte buffer fits in 64 KiB: the rest wait, nothing lost.
  CHECK(a.stats().queue_depth == 5);
  held.clear();  // the receiver lets go: the space goes back in a release
  unsigned next = 1;
  ok = run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      CHECK(m.env.request_id == next);
      CHECK(matches(m.placed[0], 40000, next));
      ++next;  // and dropped: its space goes back
    }
    return next == 6;
  });
  REQUIRE(ok);
  CHECK(b.stats().releases_out >= 4);
  CHECK(a.stats().releases_in >= 4);
}

TEST_CASE("connection: the queue is bounded, and a buffer larger than the arena says so") {
  test::linked_channels p;
  std::vector<unsigned char> arena(4096);
  auto s = with_arenas(4096, 4096);
  s.max_pending = 2;
  s.max_streamed = 0;  // no streaming through the arena
  connection_core a(*p.a, arena.data(), s);
  CHECK(a.submit(message(0, {pattern(5000, 0)})) == connection_core::submit_status::too_large);
  CHECK(a.submit(message(1, {})) == connection_core::submit_status::queued);
  CHECK(a.submit(message(2, {})) == connection_core::submit_status::queued);
  CHECK(a.submit(message(3, {})) == connection_core::submit_status::congested);

  s.peer_max_buffers = 1;
  s.peer_max_body = 1;
  test::linked_channels q;  // a fresh connection: the arena is mapped once per channel
  connection_core limited(*q.a, arena.data(), s);
  CHECK(limited.submit(message(4, {pattern(10, 0), pattern(10, 1)})) ==
        connection_core::submit_status::too_large);  // two buffers, the peer takes one
  CHECK(limited.submit(message(5, {pattern(10, 0)})) ==
        connection_core::submit_status::too_large);  // a 2-byte body, and no buffer left for it
  CHECK(limited.submit(message(6, {})) ==
        connection_core::submit_status::queued);  // the 2-byte body goes placed
  CHECK(limited.submit(message(7, {})) == connection_core::submit_status::queued);
  CHECK(limited.submit(message(8, {})) == connection_core::submit_status::congested);
}

TEST_CASE("connection: a body larger than the peer takes inline goes placed, streamed if need be") {
  test::linked_channels p;
  std::vector<unsigned char> arena_a(4096), arena_b(64 * 1024);
  auto sa = with_arenas(4096, 64 * 1024);
  sa.peer_max_body = 1024;
  connection_core a(*p.a, arena_a.data(), sa);
  connection_core b(*p.b, arena_b.data(), with_arenas(64 * 1024, 4096));
  // 100 KiB: larger than b's whole arena, so it streams through it.
  for (unsigned i = 0; i < 3; ++i) {
    auto m = message(i, i == 1 ? std::vector<buffer>{pattern(3000, 9)} : std::vector<buffer>{});
    m.env.body.resize(i == 2 ? 100 * 1024 : 5000);
    for (std::size_t k = 0; k < m.env.body.size(); ++k)
      m.env.body[k] = static_cast<unsigned char>(i + k * 13);
    REQUIRE(a.submit(std::move(m)) == connection_core::submit_status::queued);
  }
  unsigned next = 0;
  bool ok = run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      CHECK(m.env.request_id == next);
      CHECK((m.env.flags & envelope::body_placed) != 0);
      CHECK(m.env.body.empty());
      REQUIRE(m.placed.size() == (next == 1 ? 2u : 1u));
      if (next == 1)
        CHECK(matches(m.placed[0], 3000, 9));
      const auto& body = m.placed.back();
      REQUIRE(body.size() == (next == 2 ? 100u * 1024 : 5000u));
      bool same = true;
      for (std::size_t k = 0; k < body.size(); ++k)
        same = same && body[k] == static_cast<unsigned char>(next + k * 13);
      CHECK(same);
      ++next;
    }
    return next == 3;
  });
  REQUIRE(ok);
  CHECK(b.stats().inline_bytes_in == 0);
}

TEST_CASE("connection: a peer releasing space it was never given is cut off, with the reason") {
  test::linked_channels p;
  std::vector<unsigned char> arena(4096);
  connection_core a(*p.a, arena.data(), with_arenas(4096, 4096));
  envelope lie;
  lie.kind = envelope_kind::release;
  lie.buffers = {{1024, 64}};
  std::vector<unsigned char> bytes;
  encode(lie, bytes);
  REQUIRE(p.b->send(bytes.data(), bytes.size()).bytes == bytes.size());
  REQUIRE(until_closed(p, *p.a, a));
  MESSAGE("over " << std::string(test::channel_pair_kind()) << ": " << a.reason());
  CHECK(a.reason().find("envelope 1: release of arena space 1024+64 never given") !=
        std::string::npos);
}

TEST_CASE(
    "connection: a peer that says farewell and shuts down stopped, one that does not was lost") {
  for (bool farewell : {true, false}) {
    CAPTURE(farewell);
    test::linked_channels p;
    std::vector<unsigned char> arena_a(4096), arena_b(4096);
    connection_core a(*p.a, arena_a.data(), with_arenas(4096, 4096));
    connection_core b(*p.b, arena_b.data(), with_arenas(4096, 4096));
    a.submit(message(0, {pattern(100, 0)}));
    std::size_t got = 0;
    REQUIRE(run(p, a, b, [&] { return (got += b.take_inbound().size()) == 1; }));
    if (farewell)
      a.say_farewell();
    REQUIRE(run(p, a, b, [&] { return a.idle(); }));
    p.a->shutdown(shutdown_how::write);
    REQUIRE(until_closed(p, *p.b, b));
    CHECK(got == 1);
    CHECK(b.peer_stopped() == farewell);
    INFO(b.reason());
    CHECK(b.reason().find(farewell ? "it stopped (said farewell" : "without a farewell") !=
          std::string::npos);
  }
}

TEST_CASE("connection: releases batched before our farewell do not follow it") {
  test::linked_channels p;
  std::vector<unsigned char> arena_a(4096), arena_b(4096);
  auto slow = with_arenas(4096, 4096);
  slow.releases.delay = std::chrono::milliseconds(30);  // the batch waits
  connection_core a(*p.a, arena_a.data(), with_arenas(4096, 4096));
  connection_core b(*p.b, arena_b.data(), slow);
  a.submit(message(0, {pattern(100, 0)}));
  std::vector<inbound_message> got;
  REQUIRE(run(p, a, b, [&] {
    for (auto& m : b.take_inbound())
      got.push_back(std::move(m));
    return got.size() == 1;
  }));
  got.clear();  // the view drops: b batches its release
  actors::drive_core(*p.b, b);
  b.say_farewell();
  // Past the batch's delay, b has nothing to say: a sees no envelope after
  // the farewell, and no release.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  run(p, a, b, [&] { return std::chrono::steady_clock::now() > until; });
  CHECK_FALSE(a.closed());
  INFO(a.reason());
  CHECK(b.stats().releases_out == 0);
  CHECK(a.stats().releases_in == 0);
}

TEST_CASE("connection: nothing may follow a farewell") {
  test::linked_channels p;
  std::vector<unsigned char> arena(4096);
  connection_core a(*p.a, arena.data(), with_arenas(4096, 4096));
  envelope bye, more;
  bye.kind = envelope_kind::farewell;
  more.kind = envelope_kind::message;
  std::vector<unsigned char> bytes;
  encode(bye, bytes);
  encode(more, bytes);
  REQUIRE(p.b->send(bytes.data(), bytes.size()).bytes == bytes.size());
  REQUIRE(until_closed(p, *p.a, a));
  CHECK_FALSE(a.peer_stopped());
  CHECK(a.reason().find("envelope 2 (message) after the peer's farewell") != std::string::npos);
}

TEST_CASE("connection: a view may outlive its connection") {
  buffer kept;
  {
    test::linked_channels p;
    std::vector<unsigned char> arena_a(4096), arena_b(4096);
    connection_core a(*p.a, arena_a.data(), with_arenas(4096, 4096));
    connection_core b(*p.b, arena_b.data(), with_arenas(4096, 4096));
    a.submit(message(0, {pattern(100, 0)}));
    bool ok = run(p, a, b, [&] {
      for (auto& m : b.take_inbound())
        kept = m.placed[0];
      return !kept.empty();
    });
    REQUIRE(ok);
    kept = buffer::copy_of(kept.data(), kept.size());  // the arena goes with the test's scope
  }
  CHECK(matches(kept, 100, 0));
}

namespace {

// An arena sized by demand, both ways: `first` bytes to start with, up to
// `cap`, its segments from the heap, within `budget`.
connection_core::settings by_demand(std::uint64_t first, std::uint64_t cap,
                                    std::shared_ptr<receive_budget> budget = nullptr) {
  auto s = with_arenas(first, cap);
  s.arena_cap = cap;
  s.peer_arena_first = first;
  s.budget = std::move(budget);
  s.sizing_period = std::chrono::milliseconds(50);
  s.make_segment = [](std::uint64_t size, std::string&) {
    auto memory = std::make_shared<std::vector<unsigned char>>(size);
    arena_segment seg;
    seg.data = memory->data();
    seg.owner = memory;
    return seg;
  };
  return s;
}

// Books like the session registry's, for one connection: what its
// segments hold now, and at most.
struct counting_budget : receive_budget {
  explicit counting_budget(std::uint64_t limit, std::uint64_t first) : limit(limit), held(first) {}
  bool take(std::uint64_t bytes, bool shrinking) override {
    std::lock_guard<std::mutex> guard(lock);
    if (!shrinking && held + bytes > limit)
      return false;
    held += bytes;
    peak = std::max(peak, held);
    return true;
  }
  void give(std::uint64_t bytes) override {
    std::lock_guard<std::mutex> guard(lock);
    held -= bytes;
  }
  std::uint64_t fair_share() const override { return limit; }
  std::uint64_t now() {
    std::lock_guard<std::mutex> guard(lock);
    return held;
  }
  std::mutex lock;
  std::uint64_t limit, held, peak = 0;
};

// Sends `count` messages of one buffer each, sizes from `size_of`, and
// checks each one as it arrives, dropping it at once.
bool send_all(test::linked_channels& p, connection_core& a, connection_core& b, unsigned count,
              const std::function<std::size_t(unsigned)>& size_of) {
  for (unsigned i = 0; i < count; ++i)
    REQUIRE(a.submit(message(i, {pattern(size_of(i), i)})) ==
            connection_core::submit_status::queued);
  unsigned next = 0;
  bool intact = true;
  bool ok = run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      intact &= m.env.request_id == next && m.placed.size() == 1 &&
                matches(m.placed[0], size_of(next), next);
      ++next;
    }
    return next == count;
  });
  CHECK(intact);
  return ok;
}

}  // namespace

TEST_CASE(
    "connection: an arena sized by demand grows as its sender stalls, and shrinks when idle") {
  test::linked_channels p;
  auto budget = std::make_shared<counting_budget>(64 << 20, 64 << 10);
  connection_core a(*p.a, nullptr, by_demand(64 << 10, 8 << 20));
  connection_core b(*p.b, nullptr, by_demand(64 << 10, 8 << 20, budget));
  CHECK(b.stats().arena_size == 64 << 10);
  // 256 KiB buffers do not fit the first 64 KiB: the arena grows for them.
  REQUIRE(send_all(p, a, b, 60, [](unsigned i) { return 100000 + (i * 7919) % 160000; }));
  auto grown = b.stats();
  MESSAGE("grew to " << grown.arena_size << " bytes in " << grown.arena_moves << " moves, "
                     << a.stats().credit_stalls << " stalls");
  CHECK(grown.arena_size > 256 << 10);
  CHECK(grown.arena_size <= 8 << 20);
  CHECK(grown.arena_moves >= 2);
  CHECK(grown.streamed_bytes_in == 0);  // every buffer whole, none copied
  // Everything comes back to the sender's view of the current segment.
  CHECK(run(p, a, b, [&] { return a.stats().peer_arena_free == b.stats().arena_size; }));
  // At most two segments alive, the larger at most the cap.
  CHECK(budget->peak <= (8 << 20) + (4 << 20));
  // Idle, it halves each period down to its first size; the segments it
  // left go back to the budget.
  bool ok =
      run(p, a, b, [&] { return b.stats().arena_size == 64 << 10 && budget->now() == 64 << 10; });
  CHECK(ok);
  CHECK(b.stats().arena_held == 64 << 10);
  CHECK(a.stats().peer_arena_free == 64 << 10);
  // And grows again when asked.
  REQUIRE(send_all(p, a, b, 20, [](unsigned) { return 200000; }));
  CHECK(b.stats().arena_size > 64 << 10);
}

TEST_CASE("connection: what the receiver's budget cannot grow for streams through its arena") {
  test::linked_channels p;
  // Room for the first 64 KiB and one 128 KiB segment at most.
  auto budget = std::make_shared<counting_budget>(192 << 10, 64 << 10);
  connection_core a(*p.a, nullptr, by_demand(64 << 10, 8 << 20));
  connection_core b(*p.b, nullptr, by_demand(64 << 10, 8 << 20, budget));
  REQUIRE(send_all(p, a, b, 8, [](unsigned i) { return i % 2 ? 1000000 : 30000; }));
  CHECK(b.stats().streamed_bytes_in == 4 * 1000000);
  CHECK(budget->peak <= 192 << 10);
  CHECK(a.stats().dropped == 0);
}

TEST_CASE("connection: a view of a segment the arena moved from stays readable") {
  test::linked_channels p;
  connection_core a(*p.a, nullptr, by_demand(64 << 10, 8 << 20));
  connection_core b(*p.b, nullptr, by_demand(64 << 10, 8 << 20));
  REQUIRE(a.submit(message(0, {pattern(50000, 3)})) == connection_core::submit_status::queued);
  std::vector<inbound_message> held;
  REQUIRE(run(p, a, b, [&] {
    for (auto& m : b.take_inbound())
      held.push_back(std::move(m));
    return held.size() == 1;
  }));
  // Larger ones move the arena while the first view is still held.
  REQUIRE(send_all(p, a, b, 10, [](unsigned) { return 300000; }));
  CHECK(b.stats().arena_moves >= 1);
  CHECK(matches(held[0].placed[0], 50000, 3));
}
