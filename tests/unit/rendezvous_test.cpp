// The two tables of a rendezvous, each alone: the sender's loans and the
// receiver's order of messages waiting for their fetches.
#include <riomesh/actors/connection/fetch_order.hpp>
#include <riomesh/actors/placement/lent_buffers.hpp>

#include <doctest/doctest.h>

using namespace riomesh;
using namespace riomesh::actors;

TEST_CASE("lent buffers: offsets apart, never reused, each loan taken back once") {
  lent_buffers l(2);
  auto a = *l.next_offset(5000, true);
  CHECK(a == wire_envelope::lent_from);
  CHECK(l.lend(buffer::heap(5000), true) == a);
  auto b = *l.next_offset(100, true);
  CHECK(b == a + 8192 + 4096);  // whole pages, and a page between loans
  CHECK(l.lend(buffer::heap(100), true) == b);
  CHECK(l.full());
  CHECK(l.bytes() == 5100);
  REQUIRE(l.find(a));
  CHECK(l.find(a)->mapped);
  CHECK_FALSE(l.find(a + 4096));
  auto got = l.take(a);
  REQUIRE(got);
  CHECK(got->data.size() == 5000);
  CHECK_FALSE(l.take(a));
  CHECK_FALSE(l.full());
  CHECK(*l.next_offset(100, true) > b);  // a's offset is not handed out again
  // Loans to be pushed lie apart from those mapped for reading.
  auto pushed = *l.next_offset(100, false);
  CHECK(pushed == wire_envelope::lent_pushed_from);
  CHECK(l.lend(buffer::heap(100), false) == pushed);
  CHECK_FALSE(l.find(pushed)->mapped);
  CHECK_FALSE(l.next_offset(0, true));
  CHECK_FALSE(l.next_offset(wire_envelope::lent_pushed_from, true));
  CHECK_FALSE(l.next_offset(wire_envelope::lent_end, false));
}

namespace {

inbound_message with(std::uint64_t id, std::size_t buffers, std::size_t body = 3) {
  inbound_message m;
  m.env.request_id = id;
  m.env.receiver = 7;
  m.env.body.assign(body, 1);
  for (std::size_t i = 0; i < buffers; ++i) {
    m.env.buffers.push_back({wire_envelope::lent_from + id * (1 << 20) + i * 65536, 1000 + i});
    m.placed.emplace_back();
  }
  return m;
}

}  // namespace

TEST_CASE("fetch order: messages wait for their fetches and for those ahead of them") {
  fetch_order::limits lim;
  lim.window = 2500;
  fetch_order o(lim);
  CHECK(o.idle());
  std::string error;
  REQUIRE(o.hold(with(1, 2), {0, 1}, error));
  REQUIRE(o.hold(with(2, 0), {}, error));  // nothing to fetch, but behind 1
  REQUIRE(o.hold(with(3, 1), {0}, error));
  auto j1 = o.next();
  auto j2 = o.next();
  REQUIRE(j1);
  REQUIRE(j2);
  CHECK(j1->receiver == 7);
  CHECK(j2->length == 1001);
  CHECK_FALSE(o.next());  // 2001 taken: 1000 more would pass the window
  CHECK(o.taken() == 2001);
  std::vector<inbound_message> out;
  REQUIRE(o.landed(*j2, buffer::heap(1001)));
  CHECK_FALSE(o.landed(*j2, buffer::heap(1001)));  // once
  o.take_ready(out);
  CHECK(out.empty());
  CHECK_FALSE(o.next());  // landed, but the application holds it still
  o.give_back(1001);
  auto j3 = o.next();
  REQUIRE(j3);
  REQUIRE(o.landed(*j3, buffer::heap(1000)));
  o.take_ready(out);
  CHECK(out.empty());  // 3 is complete, but 1 is not
  REQUIRE(o.landed(*j1, buffer::heap(1000)));
  o.take_ready(out);
  REQUIRE(out.size() == 3);
  CHECK(out[0].env.request_id == 1);
  CHECK(out[0].placed[1].size() == 1001);
  CHECK(out[2].env.request_id == 3);
  CHECK(o.idle());
  CHECK(o.taken() == 2000);  // until the application lets go
  o.give_back(2000);
  CHECK(o.taken() == 0);
}

TEST_CASE(
    "fetch order: one buffer larger than the window goes alone, a retry goes first, what waits is "
    "bounded") {
  fetch_order::limits lim;
  lim.window = 100;
  lim.max_held = 2;
  lim.max_held_bytes = 10;
  fetch_order o(lim);
  std::string error;
  REQUIRE(o.hold(with(1, 1), {0}, error));
  auto j = o.next();  // 1000 bytes, alone
  REQUIRE(j);
  o.retry(*j);  // could not go now: first again
  CHECK(o.taken() == 0);
  auto again = o.next();
  REQUIRE(again);
  CHECK(again->offset == j->offset);
  REQUIRE(o.hold(with(2, 0, 7), {}, error));
  CHECK_FALSE(o.hold(with(3, 0), {}, error));  // a third message
  CHECK(error.find("more than the 2 messages") != std::string::npos);
  fetch_order p(lim);
  CHECK_FALSE(p.hold(with(1, 0, 11), {}, error));  // 11 bytes inline
  fetch_order::job made_up{99, 0, 0, 10, 0};
  CHECK_FALSE(o.landed(made_up, buffer::heap(10)));
}
