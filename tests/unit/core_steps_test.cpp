// The connection core and its driver over a channel in memory: two cores
// hand each other their stream bytes, cut in random pieces both when read
// and when sent, and their placements land in memory at once, so every
// case is deterministic and needs no network. The same cores run over real
// channels in the integration tests (connection_core_test.cpp).
#include <riomesh/actors/connection/core_drive.hpp>
#include "core_messages.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace riomesh;
using namespace riomesh::actors;
using channels::io_result;
using channels::status;
using riomesh::test::matches;
using riomesh::test::message;
using riomesh::test::pattern;

namespace {

// One side of a connection in memory. Its placements: its maps, and
// writes into the peer's maps, copied at once (so ahead of any later
// stream byte); a write takes at most `room` bytes per call (then
// would_block), to make the core resume. Its stream: what the peer sent,
// read at most `read_piece` bytes at a time (cut anywhere), and sends
// that take at most `send_room` bytes per call.
class memory_channel final : public channels::channel {
 public:
  memory_channel* other = nullptr;      // the other end
  std::vector<channels::event> events;  // what the channel would report here
  std::size_t room = ~std::size_t{0};
  std::size_t writes = 0;
  std::size_t send_room = ~std::size_t{0};
  std::size_t read_piece = ~std::size_t{0};
  std::vector<unsigned char> inbox;
  bool peer_shut = false;  // the peer ended its stream
  int shutdowns = 0;
  status send_answer = status::ok;  // not ok: every send is refused so
  bool lost = false;                // the connection broke
  std::string why;

  channels::map_result map(void* base, std::size_t length, std::optional<std::uint64_t> offset,
                           std::uint8_t) override {
    if (lost)
      return {status::closed, 0};
    auto at = offset ? *offset : reinterpret_cast<std::uint64_t>(base);
    maps_[at] = {static_cast<unsigned char*>(base), length};
    channels::event e;
    e.kind = channels::event_kind::peer_iomap;
    e.token = at;
    other->events.push_back(e);
    return {status::ok, at};
  }
  status unmap(std::uint64_t offset) override {
    return maps_.erase(offset) ? status::ok : status::invalid;
  }
  io_result iowrite(const void* source, std::size_t length, std::uint64_t offset,
                    std::uint64_t token) override {
    auto* into = other->at(offset, length);
    if (!into)
      return {0, status::no_mapping};
    auto n = std::min(length, room);
    if (n == 0)
      return {0, status::would_block};
    std::memcpy(into, source, n);
    ++writes;
    channels::event e;
    e.kind = channels::event_kind::iowrite_done;
    e.token = token;
    events.push_back(e);
    return {n, n == length ? status::ok : status::would_block};
  }

  io_result send(const void* data, std::size_t length) override {
    if (lost || shutdowns)
      return {0, status::closed};
    if (send_answer != status::ok)
      return {0, send_answer};
    auto n = std::min(length, send_room);
    const auto* p = static_cast<const unsigned char*>(data);
    other->inbox.insert(other->inbox.end(), p, p + n);
    return {n, n == length ? status::ok : status::would_block};
  }
  io_result recv(void*, std::size_t) override {
    return {0, inbox.empty() && peer_shut ? status::eof : status::would_block};
  }
  std::pair<const unsigned char*, std::size_t> peek() override {
    return {inbox.data(), std::min(inbox.size(), read_piece)};
  }
  void consume(std::size_t n) override {
    inbox.erase(inbox.begin(), inbox.begin() + static_cast<std::ptrdiff_t>(n));
  }
  status shutdown(channels::shutdown_how) override {
    ++shutdowns;
    return status::ok;
  }
  bool take_events(std::vector<channels::event>& out) override {
    out.insert(out.end(), events.begin(), events.end());
    bool any = !events.empty();
    events.clear();
    return any;
  }
  bool closed() const override { return lost; }
  const std::string& reason() const override { return why; }
  const std::string& peer() const override { return name_; }
  bool drained() const override { return true; }
  int wait_fd() const override { return -1; }
  bool wants_write() const override { return false; }
  void progress() override {}

 private:
  struct mapped {
    unsigned char* data;
    std::size_t length;
  };
  unsigned char* at(std::uint64_t offset, std::size_t length) {
    auto it = maps_.upper_bound(offset);
    if (it == maps_.begin())
      return nullptr;
    --it;
    if (offset - it->first + length > it->second.length)
      return nullptr;
    return it->second.data + (offset - it->first);
  }
  std::map<std::uint64_t, mapped> maps_;
  std::string name_ = "memory";
};

connection_core::settings terms(std::uint64_t mine, std::uint64_t peers, const std::string& peer) {
  connection_core::settings s;
  s.peer = peer;
  s.inbound.arena_size = mine;
  s.inbound.max_body = 1 << 16;
  s.peer_arena_size = peers;
  s.releases.delay = std::chrono::microseconds(0);  // released space reported at once
  return s;
}

// A core, its channel and its arena.
struct side {
  side(std::uint64_t mine, std::uint64_t peers, const std::string& peer)
      : arena(mine), settings(terms(mine, peers, peer)) {}
  std::vector<unsigned char> arena;
  connection_core::settings settings;
  memory_channel ch;
  std::unique_ptr<connection_core> core;
  std::vector<inbound_message> got;
  void start() { core = std::make_unique<connection_core>(ch, arena.data(), settings); }
};

struct pair_of_cores {
  pair_of_cores(std::uint64_t arena_a, std::uint64_t arena_b, unsigned seed)
      : a(arena_a, arena_b, "b"), b(arena_b, arena_a, "a"), rng(seed) {
    a.ch.other = &b.ch;
    b.ch.other = &a.ch;
    a.start();
    b.start();
  }
  side a, b;
  std::mt19937 rng;
  std::size_t most_piece = 1 << 12;  // stream bytes read or sent at most this many at a time

  // One round of `s`, driven as over a real channel, its stream cut anew.
  bool round(side& s) {
    std::uniform_int_distribution<std::size_t> cut(1, most_piece);
    s.ch.read_piece = cut(rng);
    s.ch.send_room = cut(rng);
    bool moved = drive_core(s.ch, *s.core);
    s.core->take_inbound(scratch);
    for (auto& m : scratch)
      s.got.push_back(std::move(m));
    scratch.clear();
    return moved;
  }
  // Rounds of both until `done`, or nothing moves any more.
  template <class Done>
  bool run(Done done) {
    for (int idle = 0; idle < 3;) {
      bool moved = round(a);
      moved = round(b) || moved;
      if (done())
        return true;
      idle = moved ? 0 : idle + 1;
    }
    return done();
  }
  std::vector<inbound_message> scratch;
};

}  // namespace

TEST_CASE("core steps: placed buffers arrive whole and in order, the arena's space comes back") {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    // b's arena holds three of these: a sends into released space.
    pair_of_cores p(64 << 10, 64 << 10, seed);
    p.most_piece = seed % 2 ? 1 : 4096;
    constexpr unsigned count = 24;
    for (unsigned i = 0; i < count; ++i)
      REQUIRE(p.a.core->submit(message(i, {pattern(20000 + i, i)})) ==
              connection_core::submit_status::queued);
    // a alone: three go, then it waits for b's releases.
    for (int i = 0; i < 200; ++i)
      p.round(p.a);
    CHECK(p.a.core->stats().credit_stalls == 1);
    CHECK(p.a.core->stats().bytes_placed_out == 3 * 20000 + 0 + 1 + 2);
    unsigned next = 0;
    REQUIRE(p.run([&] {
      for (const auto& m : p.b.got) {
        REQUIRE(m.env.request_id == next);
        REQUIRE(m.placed.size() == 1);
        CHECK(matches(m.placed[0], 20000 + next, next));
        ++next;
      }
      p.b.got.clear();  // the views drop: their space goes back to a
      return next == count && p.a.core->idle() && p.a.core->stats().peer_arena_free == 64 << 10;
    }));
    CHECK(p.b.core->stats().messages_in == count);
    CHECK(p.b.core->stats().releases_out > 0);
    CHECK_FALSE(p.a.core->closed());
    CHECK_FALSE(p.b.core->closed());
  }
}

TEST_CASE("core steps: nothing is placed before the peer's arena is mapped for it") {
  pair_of_cores p(64 << 10, 64 << 10, 1);
  p.a.ch.events.clear();  // b's map, not announced yet
  REQUIRE(p.a.core->submit(message(0, {pattern(1000, 0)})) ==
          connection_core::submit_status::queued);
  REQUIRE(p.a.core->submit(message(1)) == connection_core::submit_status::queued);
  p.round(p.a);
  CHECK(p.a.ch.writes == 0);
  CHECK(p.b.ch.inbox.empty());  // the message behind it waits too: order holds
  channels::event mapped;
  mapped.kind = channels::event_kind::peer_iomap;
  p.a.ch.events.push_back(mapped);
  REQUIRE(p.run([&] { return p.b.got.size() == 2; }));
  CHECK(matches(p.b.got[0].placed[0], 1000, 0));
  CHECK(p.b.got[1].env.request_id == 1);
}

TEST_CASE("core steps: a write the fabric takes in parts is resumed where it stopped") {
  pair_of_cores p(1 << 20, 1 << 20, 3);
  p.a.ch.room = 1000;  // of each write call
  REQUIRE(p.a.core->submit(message(0, {pattern(50000, 4)})) ==
          connection_core::submit_status::queued);
  REQUIRE(p.run([&] { return p.b.got.size() == 1; }));
  CHECK(matches(p.b.got[0].placed[0], 50000, 4));
  CHECK(p.a.ch.writes == 50);
}

TEST_CASE("core steps: a direct write with no map at the peer drops its message alone") {
  pair_of_cores p(64 << 10, 64 << 10, 4);
  std::string why;
  auto m = message(0);
  m.writes.push_back({1ull << 40, pattern(100, 1)});
  m.on_failure = [&](send_failure f, const std::string& w) {
    CHECK(f == send_failure::not_mapped);
    why = w;
  };
  REQUIRE(p.a.core->submit(std::move(m)) == connection_core::submit_status::queued);
  REQUIRE(p.a.core->submit(message(1)) == connection_core::submit_status::queued);
  REQUIRE(p.run([&] { return p.b.got.size() == 1; }));
  CHECK(p.b.got[0].env.request_id == 1);
  CHECK(why.find("no mapping at the peer for 100 bytes") != std::string::npos);
  CHECK(p.a.core->stats().dropped == 1);
}

TEST_CASE("core steps: bytes that are no envelope fail the core once, naming the peer") {
  pair_of_cores p(64 << 10, 64 << 10, 5);
  REQUIRE(p.b.core->submit(message(0)) == connection_core::submit_status::queued);
  p.b.ch.inbox.assign(64, 0xee);
  p.round(p.b);
  REQUIRE(p.b.core->closed());
  CHECK(p.b.core->reason().rfind("peer a: ", 0) == 0);
  CHECK(p.b.core->reason().find("bad magic") != std::string::npos);
  CHECK(p.b.ch.shutdowns == 1);
  CHECK(p.a.ch.inbox.empty());  // what b had queued never went
  CHECK(p.b.core->output().second == 0);
  // What comes after changes nothing.
  p.b.ch.peer_shut = true;
  p.round(p.b);
  p.b.core->on_closed("the channel's reason");
  p.b.core->on_end();
  CHECK(p.b.core->reason().find("bad magic") != std::string::npos);
  CHECK_FALSE(p.b.core->peer_stopped());
  CHECK(p.b.ch.shutdowns == 1);
}

TEST_CASE("core steps: a release of space never given fails the core") {
  pair_of_cores p(64 << 10, 64 << 10, 6);
  envelope rel;
  rel.kind = envelope_kind::release;
  rel.buffers.push_back({4096, 4096});
  encode(rel, p.a.ch.inbox);
  p.round(p.a);
  REQUIRE(p.a.core->closed());
  CHECK(p.a.core->reason().find("release of arena space 4096+4096 never given") !=
        std::string::npos);
  CHECK(p.a.ch.shutdowns == 1);
}

TEST_CASE("core steps: the stream's end says whether the peer stopped in order") {
  SUBCASE("after its farewell") {
    pair_of_cores p(64 << 10, 64 << 10, 7);
    REQUIRE(p.a.core->submit(message(0)) == connection_core::submit_status::queued);
    REQUIRE(p.run([&] { return p.b.got.size() == 1 && p.a.core->idle(); }));
    p.a.core->say_farewell();
    CHECK_FALSE(p.a.core->idle());  // until the farewell is handed over
    REQUIRE(p.run([&] { return p.a.core->idle() && p.b.ch.inbox.empty(); }));
    CHECK_FALSE(p.b.core->closed());
    p.b.ch.peer_shut = true;
    p.round(p.b);
    CHECK(p.b.core->peer_stopped());
    CHECK(p.b.core->reason().find("it stopped") != std::string::npos);
    CHECK(p.b.ch.shutdowns == 1);
  }
  SUBCASE("without one") {
    pair_of_cores p(64 << 10, 64 << 10, 8);
    p.b.ch.peer_shut = true;
    p.round(p.b);
    CHECK_FALSE(p.b.core->peer_stopped());
    CHECK(p.b.core->reason().find("without a farewell") != std::string::npos);
  }
  SUBCASE("an envelope after the farewell") {
    pair_of_cores p(64 << 10, 64 << 10, 9);
    p.a.core->say_farewell();
    REQUIRE(p.run([&] { return p.b.ch.inbox.empty() && p.a.core->idle(); }));
    envelope late;
    late.kind = envelope_kind::message;
    encode(late, p.b.ch.inbox);
    p.round(p.b);
    CHECK(p.b.core->reason().find("after the peer's farewell") != std::string::npos);
  }
}

TEST_CASE("core steps: a closed channel's reason is given as it is") {
  pair_of_cores p(64 << 10, 64 << 10, 10);
  REQUIRE(p.a.core->submit(message(0)) == connection_core::submit_status::queued);
  SUBCASE("with a reason") {
    p.a.ch.why = "peer 10.0.0.2:7000: reset";
    p.a.ch.lost = true;
    p.round(p.a);
    CHECK(p.a.core->reason() == "peer 10.0.0.2:7000: reset");
  }
  SUBCASE("without one") {
    p.a.ch.lost = true;
    p.round(p.a);
    CHECK(p.a.core->reason() == "the connection closed");
  }
  CHECK(p.a.core->closed());
  CHECK(p.a.ch.shutdowns == 0);  // the channel is gone already
  CHECK(p.b.ch.inbox.empty());
  CHECK(p.a.core->submit(message(1)) == connection_core::submit_status::closed);
}

TEST_CASE("core steps: a channel lost before the core began gives its reason, and nothing read") {
  pair_of_cores p(64 << 10, 64 << 10, 12);
  REQUIRE(p.a.core->submit(message(0, {pattern(100, 2)})) ==
          connection_core::submit_status::queued);
  REQUIRE(p.run([&] { return p.b.got.size() == 1; }));
  p.b.got.clear();
  // b's channel breaks in the read that ends its session: b's next core
  // cannot map its arena, and bytes of a's wait in the channel.
  REQUIRE(p.a.core->submit(message(1)) == connection_core::submit_status::queued);
  p.round(p.a);
  REQUIRE_FALSE(p.b.ch.inbox.empty());
  p.b.ch.lost = true;
  p.b.ch.why = "peer a: a lie right after its hello";
  p.b.start();
  CHECK(p.b.core->closed());
  CHECK(p.b.core->submit(message(2)) == connection_core::submit_status::closed);
  p.round(p.b);
  CHECK(p.b.core->reason() == "peer a: a lie right after its hello");
  CHECK(p.b.got.empty());
  CHECK_FALSE(p.b.ch.inbox.empty());
  CHECK(p.b.ch.shutdowns == 0);
}

TEST_CASE("core steps: a send the channel refuses fails the core") {
  pair_of_cores p(64 << 10, 64 << 10, 11);
  REQUIRE(p.a.core->submit(message(0)) == connection_core::submit_status::queued);
  p.a.ch.send_answer = status::invalid;
  p.round(p.a);
  CHECK(p.a.core->closed());
  CHECK(p.a.core->reason().rfind("peer b: send: ", 0) == 0);
  CHECK(p.a.ch.shutdowns == 1);
  CHECK(p.a.core->output().second == 0);
}

TEST_CASE("core steps: what is still queued when the connection ends fails, each once") {
  pair_of_cores p(64 << 10, 64 << 10, 13);
  p.a.ch.events.clear();  // b's map, not announced: placed messages wait
  std::vector<unsigned> failed;
  for (unsigned i = 0; i < 3; ++i) {
    auto m = message(i, {pattern(1000, i)});
    m.on_failure = [&failed, i](send_failure f, const std::string& why) {
      CHECK(f == send_failure::node_lost);
      CHECK(why == "gone");
      failed.push_back(i);
    };
    REQUIRE(p.a.core->submit(std::move(m)) == connection_core::submit_status::queued);
  }
  p.round(p.a);
  CHECK(p.a.core->queue_depth() == 3);
  p.a.core->fail_queued(send_failure::node_lost, "gone");
  CHECK(failed == std::vector<unsigned>{0, 1, 2});
  CHECK(p.a.core->queue_depth() == 0);
  p.a.core->fail_queued(send_failure::node_lost, "gone");
  CHECK(failed.size() == 3);
}
