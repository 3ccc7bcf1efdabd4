// The connection core's one-sided fetches, over placements that record the
// calls and lets the test say how far each goes.
#include <riomesh/actors/connection/direct_fetch.hpp>
#include <riomesh/actors/connection/send_registrations.hpp>

#include <doctest/doctest.h>

#include <deque>

using namespace riomesh;
using namespace riomesh::actors;
using channels::io_result;
using channels::status;

namespace {

// Takes at most `room` bytes per ioread, then answers would_block; an
// offset from `unmapped_from` on has no map.
class fetch_channel final : public channels::iomap_access, public channels::one_sided_access {
 public:
  one_sided_access* one_sided() override { return this; }
  struct read_call {
    std::vector<destination> into;
    std::uint64_t offset = 0, token = 0;
  };
  std::vector<read_call> reads;
  std::size_t room = 1 << 30;
  std::uint64_t unmapped_from = ~std::uint64_t{0};
  status atomic_answer = status::ok;
  std::uint64_t atomic_token = 0;

  io_result ioread(const destination* into, std::size_t count, std::uint64_t offset,
                   std::uint64_t token) override {
    if (room == 0)
      return {0, status::would_block};
    if (offset >= unmapped_from)
      return {0, status::no_mapping};
    read_call call{{}, offset, token};
    std::size_t asked = 0;
    for (std::size_t i = 0; i < count; ++i)
      asked += into[i].length;
    auto mapped = unmapped_from - offset;
    auto total = std::min<std::uint64_t>({asked, room, mapped});
    for (std::size_t i = 0, left = total; i < count && left > 0; ++i) {
      auto n = std::min(into[i].length, left);
      call.into.push_back({into[i].data, n});
      left -= n;
    }
    room -= total;
    reads.push_back(call);
    if (total == asked)
      return {total, status::ok};
    return {total, total == mapped ? status::no_mapping : status::would_block};
  }
  io_result ioatomic(channels::atomic_op, std::uint64_t, std::uint64_t, std::uint64_t,
                     std::uint64_t token) override {
    atomic_token = token;
    return {atomic_answer == status::ok ? 8u : 0u, atomic_answer};
  }

  channels::map_result map(void*, std::size_t, std::optional<std::uint64_t>,
                           std::uint8_t) override {
    return {};
  }
  status unmap(std::uint64_t) override { return status::ok; }
  io_result iowrite(const void*, std::size_t n, std::uint64_t, std::uint64_t) override {
    return {n, status::ok};
  }
};

channels::event done(channels::event_kind k, std::uint64_t token, std::uint64_t value = 0) {
  channels::event e;
  e.kind = k;
  e.token = token;
  e.value = value;
  return e;
}

}  // namespace

TEST_CASE("direct fetch: a read resumed after a full queue completes once, when all of it has") {
  fetch_channel ch;
  send_registrations regs(ch);
  fetch_flights flights(ch, regs);
  auto first = buffer::heap(300), second = buffer::heap(200);
  direct_fetch f;
  f.offset = 1000;
  f.into = buffer::gather({first, second});
  int calls = 0;
  f.done = [&](std::uint64_t) { ++calls; };
  ch.room = 250;
  std::string why;
  CHECK(flights.start(f, why) == fetch_flights::state::waiting);
  REQUIRE(ch.reads.size() == 1);
  CHECK(ch.reads[0].offset == 1000);
  CHECK(ch.reads[0].into.size() == 1);
  CHECK(ch.reads[0].into[0].data == first.data());
  ch.room = 1000;
  CHECK(flights.start(f, why) == fetch_flights::state::posted);
  REQUIRE(ch.reads.size() == 2);
  // Resumed where it stopped: 50 bytes of the first piece, all the second.
  CHECK(ch.reads[1].offset == 1250);
  REQUIRE(ch.reads[1].into.size() == 2);
  CHECK(ch.reads[1].into[0].data == first.data() + 250);
  CHECK(ch.reads[1].into[0].length == 50);
  CHECK(ch.reads[1].into[1].length == 200);
  CHECK(ch.reads[0].token == ch.reads[1].token);
  auto token = ch.reads[0].token;
  CHECK_FALSE(flights.idle());
  CHECK_FALSE(flights.complete(done(channels::event_kind::iowrite_done, token)));
  CHECK(flights.complete(done(channels::event_kind::ioread_done, token)));
  CHECK(calls == 0);
  CHECK(flights.complete(done(channels::event_kind::ioread_done, token)));
  CHECK(calls == 1);
  CHECK(flights.idle());
}

TEST_CASE("direct fetch: a read past the peer's map, or outside it, is refused and not done") {
  fetch_channel ch;
  send_registrations regs(ch);
  fetch_flights flights(ch, regs);
  int calls = 0;
  direct_fetch f;
  f.offset = 0;
  f.into = buffer::heap(100);
  f.done = [&](std::uint64_t) { ++calls; };
  ch.unmapped_from = 60;
  std::string why;
  CHECK(flights.start(f, why) == fetch_flights::state::past_map);
  CHECK(why == "a read of 100 bytes at offset 60 of the peer's maps: no mapping at that offset");
  // What went completes unheard.
  REQUIRE(ch.reads.size() == 1);
  CHECK(flights.complete(done(channels::event_kind::ioread_done, ch.reads[0].token)));
  CHECK(calls == 0);
  CHECK(flights.idle());
  f.offset = 70;
  f.done = [&](std::uint64_t) { ++calls; };
  CHECK(flights.start(f, why) == fetch_flights::state::unmapped);
  CHECK(flights.idle());
  CHECK(calls == 0);
}

TEST_CASE("direct fetch: an atomic waits for room, gives its old word, and a misfit is refused") {
  fetch_channel ch;
  send_registrations regs(ch);
  fetch_flights flights(ch, regs);
  std::uint64_t old = 0;
  direct_fetch f;
  f.op = direct_fetch::kind::fetch_add;
  f.offset = 8;
  f.a = 1;
  f.done = [&](std::uint64_t v) { old = v; };
  ch.atomic_answer = status::would_block;
  std::string why;
  CHECK(flights.start(f, why) == fetch_flights::state::waiting);
  ch.atomic_answer = status::ok;
  CHECK(flights.start(f, why) == fetch_flights::state::posted);
  CHECK(flights.complete(done(channels::event_kind::ioatomic_done, ch.atomic_token, 41)));
  CHECK(old == 41);
  CHECK(flights.idle());
  f.op = direct_fetch::kind::compare_swap;
  f.done = [&](std::uint64_t v) { old = v + 1000; };
  ch.atomic_answer = status::invalid;
  CHECK(flights.start(f, why) == fetch_flights::state::refused);
  CHECK(why ==
        "an atomic needs an 8-byte word aligned in memory, within one map; the word at offset 8 "
        "of the peer's maps is not one");
  CHECK(flights.idle());
  CHECK(old == 41);
}
