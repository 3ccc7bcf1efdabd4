// Large buffers by rendezvous between two real channels (tcp over
// loopback: pushed into the receiver's map; rdma in the VM: read
// one-sided), in one process: they stay in the sender's memory until the
// receiver fetched them, arrive in order with everything else, land where
// the receiver chose, and a peer that lies about a loan is cut off.
#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/placement/arena_steps.hpp>
#include <riomesh/channels/tcp/tcp_channel.hpp>
#include "channel_pair.hpp"
#include "core_pair.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <optional>

using namespace riomesh;
using namespace riomesh::actors;
using namespace riomesh::test;

namespace {

constexpr std::uint64_t arena = 1 << 20;

// a lends from 64 KiB on, b fetches.
std::pair<connection_core::settings, connection_core::settings> lending(linked_channels& p) {
  auto a = with_arenas(arena, arena);
  auto b = with_arenas(arena, arena);
  a.lend_from = 64 << 10;
  a.peer_fetches_lent = true;
  b.inbound.accepts_lent = true;
  a.reads_one_sided = b.reads_one_sided = p.a->one_sided() != nullptr;
  return {a, b};
}

// A sender's buffer that counts its handles going: how it learns reuse.
buffer counted(std::size_t n, unsigned seed, std::shared_ptr<std::atomic<int>> gone) {
  auto src = pattern(n, seed);
  return buffer::wrap(src.data(), src.size(), [src, gone] { ++*gone; });
}

}  // namespace

TEST_CASE("rendezvous: large buffers stay with the sender until fetched, in order with the rest") {
  linked_channels p;
  auto [sa, sb] = lending(p);
  std::vector<unsigned char> arena_a(arena), arena_b(arena);
  connection_core a(*p.a, arena_a.data(), sa);
  connection_core b(*p.b, arena_b.data(), sb);
  auto gone = std::make_shared<std::atomic<int>>(0);
  // Sizes below, at and above the threshold, and larger than the arena
  // (4 MiB), which would otherwise stream through it in pieces.
  const std::vector<std::size_t> sizes = {100, 64 << 10, 3000, 300 << 10, 4 << 20, 70000, 50};
  const unsigned rounds = 6;
  int large = 0;
  for (unsigned i = 0; i < rounds * sizes.size(); ++i) {
    auto n = sizes[i % sizes.size()];
    large += n >= (64 << 10);
    std::vector<buffer> placed{counted(n, i, gone)};
    if (i % 3 == 0)
      placed.push_back(pattern(2000, i + 1000));  // an eager one beside it
    REQUIRE(a.submit(message(i, std::move(placed))) == connection_core::submit_status::queued);
  }
  unsigned next = 0;
  bool ok = run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      unsigned i = static_cast<unsigned>(m.env.request_id);
      REQUIRE(i == next);
      auto n = sizes[i % sizes.size()];
      REQUIRE(m.placed.size() == (i % 3 == 0 ? 2u : 1u));
      CHECK(matches(m.placed[0], n, i));
      // Fetched ones land outside the arena, in memory the receiver chose.
      bool in_arena = m.placed[0].data() >= arena_b.data() &&
                      m.placed[0].data() < arena_b.data() + arena_b.size();
      CHECK(in_arena == (n < (64 << 10)));
      if (i % 3 == 0)
        CHECK(matches(m.placed[1], 2000, i + 1000));
      ++next;
    }
    return next == rounds * sizes.size() && a.idle();
  });
  MESSAGE("over " << std::string(channel_pair_kind()) << ": " << a.stats().buffers_lent << " lent, "
                  << b.stats().buffers_fetched << " fetched, " << b.stats().bytes_fetched
                  << " bytes");
  REQUIRE(ok);
  CHECK(a.stats().buffers_lent == static_cast<std::uint64_t>(large));
  CHECK(b.stats().buffers_fetched == static_cast<std::uint64_t>(large));
  CHECK(a.stats().loans_open == 0);
  CHECK(b.stats().streamed_bytes_in == 0);  // 4 MiB went whole, not through the arena
  // Every buffer of the sender's was let go: it may reuse them.
  CHECK(gone->load() == static_cast<int>(rounds * sizes.size()));
}

TEST_CASE("rendezvous: a buffer gathered from many pieces is lent too, pushed whole") {
  linked_channels p;
  auto [sa, sb] = lending(p);
  std::vector<unsigned char> arena_a(arena), arena_b(arena);
  connection_core a(*p.a, arena_a.data(), sa);
  connection_core b(*p.b, arena_b.data(), sb);
  // 12 pieces: more than are mapped for reading (each takes one of the
  // peer's few map slots), so it is pushed even where reads are one-sided.
  auto whole = pattern(12 * 30000, 4);
  std::vector<buffer> pieces;
  for (std::size_t at = 0; at < whole.size(); at += 30000)
    pieces.push_back(whole.slice(at, 30000));
  auto few = pattern(3 * 40000, 5);
  REQUIRE(a.submit(message(0, {buffer::gather(pieces)})) == connection_core::submit_status::queued);
  REQUIRE(a.submit(message(1, {buffer::gather({few.slice(0, 40000), few.slice(40000, 40000),
                                               few.slice(80000, 40000)})})) ==
          connection_core::submit_status::queued);
  unsigned next = 0;
  REQUIRE(run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      CHECK(m.env.request_id == next);
      CHECK(matches(m.placed[0], next == 0 ? 12 * 30000 : 3 * 40000, next == 0 ? 4 : 5));
      ++next;
    }
    return next == 2 && a.idle();
  }));
  CHECK(a.stats().buffers_lent == 2);
  CHECK(b.stats().buffers_fetched == 2);
}

TEST_CASE("rendezvous: a lent buffer lands in the destination the receiver gives") {
  linked_channels p;
  auto [sa, sb] = lending(p);
  std::vector<unsigned char> mine(1 << 20);
  std::vector<std::uint64_t> asked;
  sb.destination = [&](std::uint64_t size, std::uint64_t receiver) {
    asked.push_back(receiver);
    return buffer::wrap(mine.data(), size + 512, [] {});  // larger: the fetch takes its start
  };
  std::vector<unsigned char> arena_a(arena), arena_b(arena);
  connection_core a(*p.a, arena_a.data(), sa);
  connection_core b(*p.b, arena_b.data(), sb);
  REQUIRE(a.submit(message(0, {pattern(200 << 10, 5)})) == connection_core::submit_status::queued);
  std::vector<inbound_message> got;
  REQUIRE(run(p, a, b, [&] {
    for (auto& m : b.take_inbound())
      got.push_back(std::move(m));
    return got.size() == 1;
  }));
  REQUIRE(got[0].placed.size() == 1);
  CHECK(got[0].placed[0].data() == mine.data());
  CHECK(matches(got[0].placed[0], 200 << 10, 5));
  CHECK(asked == std::vector<std::uint64_t>{2});  // message() addresses actor 2
}

TEST_CASE("rendezvous: loans and the receiver's window bound what is out at once") {
  linked_channels p;
  auto [sa, sb] = lending(p);
  sa.max_loans = 2;
  sb.fetches.window = 256 << 10;
  std::vector<unsigned char> arena_a(arena), arena_b(arena);
  connection_core a(*p.a, arena_a.data(), sa);
  connection_core b(*p.b, arena_b.data(), sb);
  for (unsigned i = 0; i < 12; ++i)
    REQUIRE(a.submit(message(i, {pattern(200 << 10, i)})) ==
            connection_core::submit_status::queued);
  unsigned next = 0;
  std::uint64_t most_open = 0;
  REQUIRE(run(p, a, b, [&] {
    most_open = std::max(most_open, a.stats().loans_open);
    for (auto& m : b.take_inbound()) {
      CHECK(m.env.request_id == next);
      CHECK(matches(m.placed[0], 200 << 10, next));
      ++next;
    }
    return next == 12;
  }));
  CHECK(most_open <= 2);
  CHECK(a.stats().credit_stalls > 0);  // it waited for loans to come back
}

TEST_CASE("rendezvous: a receiver that holds what it fetched fetches no more than its window") {
  linked_channels p;
  auto [sa, sb] = lending(p);
  sb.fetches.window = 450 << 10;  // two of the 200 KiB buffers
  std::vector<unsigned char> arena_a(arena), arena_b(arena);
  connection_core a(*p.a, arena_a.data(), sa);
  connection_core b(*p.b, arena_b.data(), sb);
  for (unsigned i = 0; i < 6; ++i)
    REQUIRE(a.submit(message(i, {pattern(200 << 10, i)})) ==
            connection_core::submit_status::queued);
  std::vector<inbound_message> kept;  // the application holds them
  auto take = [&] {
    for (auto& m : b.take_inbound())
      kept.push_back(std::move(m));
  };
  REQUIRE(run(p, a, b, [&] {
    take();
    return kept.size() == 2;
  }));
  // Nothing more comes while both are held, however long it is driven.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  run(p, a, b, [&] {
    take();
    return std::chrono::steady_clock::now() > until;
  });
  CHECK(kept.size() == 2);
  CHECK(a.stats().loans_open == 4);
  kept.clear();  // let go: the window opens, on the I/O thread's next round
  unsigned got = 2;
  REQUIRE(run(p, a, b, [&] {
    for (auto& m : b.take_inbound()) {
      CHECK(m.env.request_id == got);
      CHECK(matches(m.placed[0], 200 << 10, got));
      ++got;
    }
    return got == 6;
  }));
}

TEST_CASE("rendezvous: a peer that lies about a loan is cut off, with the reason") {
  struct lie {
    arena_step step;
    const char* says;
  };
  for (auto l : {lie{{arena_step::kind::fetched, std::uint64_t{1} << 61, 4096}, "says it fetched"},
                 lie{{arena_step::kind::pull, std::uint64_t{1} << 61, 0}, "to be pushed"},
                 lie{{arena_step::kind::pushed, std::uint64_t{1} << 61, 0}, "says it pushed"}}) {
    std::string says = l.says;
    CAPTURE(says);
    linked_channels p;
    auto [sa, sb] = lending(p);
    std::vector<unsigned char> arena_a(arena);
    connection_core a(*p.a, arena_a.data(), sa);
    std::vector<unsigned char> bytes;
    encode(encode_step(l.step), bytes);
    REQUIRE(p.b->send(bytes.data(), bytes.size()).bytes == bytes.size());
    REQUIRE(until_closed(p, *p.a, a));
    MESSAGE(a.reason());
    CHECK(a.reason().find(l.says) != std::string::npos);
  }
  // Lent buffers to a node that never offered to fetch them.
  linked_channels p;
  std::vector<unsigned char> arena_a(arena);
  connection_core a(*p.a, arena_a.data(), with_arenas(arena, arena));
  envelope e;
  e.kind = envelope_kind::message;
  e.flags = envelope::lent;
  e.buffers = {{std::uint64_t{1} << 61, 1 << 20}};
  std::vector<unsigned char> bytes;
  encode(e, bytes);
  REQUIRE(p.b->send(bytes.data(), bytes.size()).bytes == bytes.size());
  REQUIRE(until_closed(p, *p.a, a));
  CHECK(a.reason().find("lent buffers, which this node did not offer to fetch") !=
        std::string::npos);
}

TEST_CASE("rendezvous: a tcp peer that says it pushed a loan it did not write all of is cut off") {
  linked_channels p;
  if (!dynamic_cast<channels::tcp::tcp_channel*>(p.a.get()))
    return;  // rdma: read one-sided, or pushed into maps not written once
  auto [sa, sb] = lending(p);
  std::vector<unsigned char> arena_b(arena);
  connection_core b(*p.b, arena_b.data(), sb);
  // A loan of 128 KiB, as a lying sender (p.a by hand) announces it.
  constexpr std::uint64_t loan = wire_envelope::lent_pushed_from;
  envelope e = message(1, {}).env;
  e.flags = envelope::lent;
  e.buffers = {{loan, 128 << 10}};
  std::vector<unsigned char> bytes;
  encode(e, bytes);
  REQUIRE(p.a->send(bytes.data(), bytes.size()).bytes == bytes.size());
  // b maps where the loan is to land and asks for it: the liar writes
  // half of that map, then says it pushed it all.
  std::optional<std::uint64_t> map;
  std::vector<channels::event> events;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!map && std::chrono::steady_clock::now() < end) {
    p.a->progress();
    p.b->progress();
    actors::drive_core(*p.b, b);
    events.clear();
    p.a->take_events(events);
    for (const auto& ev : events)
      if (ev.kind == channels::event_kind::peer_iomap && ev.token >= (std::uint64_t{1} << 60))
        map = ev.token;
  }
  REQUIRE(map);
  std::vector<unsigned char> half(64 << 10, 0x5a);
  REQUIRE(p.a->iowrite(half.data(), half.size(), *map, 1).bytes == half.size());
  bytes.clear();
  encode(encode_step({arena_step::kind::pushed, loan, 0}), bytes);
  REQUIRE(p.a->send(bytes.data(), bytes.size()).bytes == bytes.size());
  REQUIRE(until_closed(p, *p.b, b));
  MESSAGE(b.reason());
  CHECK(b.reason().find("says it pushed the lent buffer at offset " + std::to_string(loan) +
                        ", and did not write all of it") != std::string::npos);
  CHECK(b.take_inbound().empty());
}

TEST_CASE("rendezvous: what waits behind an unfetched loan is bounded") {
  linked_channels p;
  auto [sa, sb] = lending(p);
  sb.fetches.max_held = 4;
  std::vector<unsigned char> arena_b(arena);
  connection_core b(*p.b, arena_b.data(), sb);
  // A loan never pushed (a tcp peer that ignores the pull; on rdma a
  // read of nothing mapped fails first), then small messages behind it.
  std::vector<unsigned char> bytes;
  for (unsigned i = 0; i < 6; ++i) {
    envelope e;
    e.kind = envelope_kind::message;
    e.request_id = i;
    e.body = {1, 2, 3};
    if (i == 0) {
      e.flags = envelope::lent;
      e.buffers = {{std::uint64_t{1} << 61, 1 << 20}};
    }
    encode(e, bytes);
  }
  REQUIRE(p.a->send(bytes.data(), bytes.size()).bytes == bytes.size());
  REQUIRE(until_closed(p, *p.b, b));
  MESSAGE(b.reason());
  CHECK(b.take_inbound().empty());  // nothing overtook the one it waits for
  CHECK(((b.reason().find("wait behind lent buffers") != std::string::npos) ||
         (b.reason().find("fetching the lent buffer") != std::string::npos)));
}
