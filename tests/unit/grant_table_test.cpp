// Remote memory grants, the logic: the owner's judgement of every use a
// holder claims, the holder's own check first, and the envelope bodies
// that carry them.
#include <riomesh/actors/envelope/envelope_decoder.hpp>
#include <riomesh/actors/grants/grant_table.hpp>
#include <riomesh/actors/grants/grant_wire.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <limits>

using namespace riomesh;
using namespace riomesh::actors;

namespace {

constexpr auto rw = static_cast<std::uint8_t>(grant_rights::read_write);
constexpr auto ro = static_cast<std::uint8_t>(grant_rights::read);
constexpr auto wo = static_cast<std::uint8_t>(grant_rights::write);

granted given_to(const std::string& holder, std::uint64_t link, std::size_t size,
                 std::uint8_t rights, bool once = false) {
  granted g;
  g.holder = holder;
  g.link = link;
  g.region = buffer::heap(size);
  for (std::size_t i = 0; i < size; ++i)
    g.region.data()[i] = static_cast<unsigned char>(i);
  if (rights & wo)
    g.map = 0x10000;
  g.rights = rights;
  g.once = once;
  return g;
}

}  // namespace

TEST_CASE("grant: a use is judged by node, connection, rights and range, and slices the region") {
  grant_table t;
  auto id = t.add(given_to("node-b", 7, 1000, rw));
  auto v = t.use(id, "node-b", 7, grant_op::read, 100, 900);
  CHECK(v.st == grant_status::ok);
  REQUIRE(v.slice.size() == 900);
  CHECK(v.slice.data()[0] == 100);
  CHECK_FALSE(v.unmap);
  CHECK(t.use(id, "node-b", 7, grant_op::write, 0, 1000).st == grant_status::ok);
  CHECK(t.use(id, "node-b", 7, grant_op::write, 0, 0).st == grant_status::ok);
  CHECK(t.use(id, "node-b", 7, grant_op::read, 1000, 0).st == grant_status::ok);

  auto other = t.use(id, "node-c", 7, grant_op::write, 0, 1);
  CHECK(other.st == grant_status::refused);
  CHECK(other.why == "grant 1 was not given to node 'node-c'");
  CHECK(t.use(id, "node-b", 8, grant_op::write, 0, 1).st == grant_status::revoked);
  auto past = t.use(id, "node-b", 7, grant_op::write, 1, 1000);
  CHECK(past.st == grant_status::out_of_range);
  CHECK(past.why == "1000 bytes at offset 1 of grant 1, which has 1000");
  // Sums that wrap around are out of range, not in it.
  CHECK(t.use(id, "node-b", 7, grant_op::read, 10, std::numeric_limits<std::uint64_t>::max()).st ==
        grant_status::out_of_range);
  CHECK(t.use(id, "node-b", 7, grant_op::read, std::numeric_limits<std::uint64_t>::max(), 2).st ==
        grant_status::out_of_range);
  auto never = t.use(99, "node-b", 7, grant_op::read, 0, 1);
  CHECK(never.st == grant_status::refused);
  CHECK(never.why == "grant 99 was never given");
  CHECK(t.use(0, "node-b", 7, grant_op::read, 0, 1).st == grant_status::refused);
}

TEST_CASE("grant: rights are kept apart") {
  grant_table t;
  auto r = t.add(given_to("node-b", 1, 64, ro));
  auto w = t.add(given_to("node-b", 1, 64, wo));
  CHECK(t.use(r, "node-b", 1, grant_op::read, 0, 64).st == grant_status::ok);
  auto no_write = t.use(r, "node-b", 1, grant_op::write, 0, 1);
  CHECK(no_write.st == grant_status::refused);
  CHECK(no_write.why == "grant 1 does not allow writing");
  CHECK(t.use(w, "node-b", 1, grant_op::write, 0, 64).st == grant_status::ok);
  CHECK(t.use(w, "node-b", 1, grant_op::read, 0, 1).st == grant_status::refused);
}

TEST_CASE("grant: use-once ends at its first good use, its write bringing its bytes") {
  grant_table t;
  auto once = given_to("node-b", 1, 64, wo, true);
  once.map.reset();  // never mapped for the holder: the owner writes
  auto id = t.add(once);
  // A refused use does not use it up.
  CHECK(t.use(id, "node-b", 1, grant_op::write, 60, 8, true).st == grant_status::out_of_range);
  CHECK(t.use(id, "node-c", 1, grant_op::write, 0, 8, true).st == grant_status::refused);
  // A write claiming bytes already in place: there is no map they could be in.
  auto placed = t.use(id, "node-b", 1, grant_op::write, 0, 8);
  CHECK(placed.st == grant_status::refused);
  CHECK(placed.why.find("brings its bytes") != std::string::npos);
  auto first = t.use(id, "node-b", 1, grant_op::write, 0, 8, true);
  CHECK(first.st == grant_status::ok);
  CHECK(first.slice.size() == 8);
  CHECK_FALSE(first.unmap);
  auto again = t.use(id, "node-b", 1, grant_op::write, 0, 8, true);
  CHECK(again.st == grant_status::revoked);
  CHECK(t.size() == 0);
  // A mapped grant takes no write that brings bytes of its own.
  auto mapped = t.add(given_to("node-b", 1, 64, wo));
  CHECK(t.use(mapped, "node-b", 1, grant_op::write, 0, 8, true).st == grant_status::refused);
}

TEST_CASE("grant: revoked, or its connection ended, no use succeeds") {
  grant_table t;
  auto a = t.add(given_to("node-b", 1, 64, rw));
  auto b = t.add(given_to("node-b", 2, 64, rw));
  auto c = t.add(given_to("node-c", 1, 64, ro));
  auto back = t.revoke(a);
  REQUIRE(back);
  CHECK(back->map == std::optional<std::uint64_t>{0x10000});
  CHECK_FALSE(t.revoke(a));
  CHECK(t.use(a, "node-b", 1, grant_op::read, 0, 1).st == grant_status::revoked);
  auto ended = t.drop_link(1);
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].holder == "node-c");
  CHECK(t.use(c, "node-c", 1, grant_op::read, 0, 1).st == grant_status::revoked);
  CHECK(t.use(b, "node-b", 2, grant_op::read, 0, 1).st == grant_status::ok);
}

TEST_CASE("grant: the holder checks its claim before anything goes out") {
  grant g;
  g.owner = "node-a";
  g.holder = "node-b";
  g.id = 3;
  g.length = 100;
  g.rights = ro;
  CHECK_FALSE(check_claim(g, "node-b", grant_op::read, 0, 100));
  auto not_mine = check_claim(g, "node-c", grant_op::read, 0, 1);
  REQUIRE(not_mine);
  CHECK(not_mine->st == grant_status::refused);
  CHECK(not_mine->why == "grant 3 of node 'node-a' is not this node's to use");
  auto no_write = check_claim(g, "node-b", grant_op::write, 0, 1);
  REQUIRE(no_write);
  CHECK(no_write->why == "grant 3 of node 'node-a' does not allow writing");
  auto past = check_claim(g, "node-b", grant_op::read, 99, 2);
  REQUIRE(past);
  CHECK(past->st == grant_status::out_of_range);
  // Writable by its rights, but the owner mapped nothing for it (forged).
  g.rights = rw;
  auto unmapped = check_claim(g, "node-b", grant_op::write, 0, 1);
  REQUIRE(unmapped);
  CHECK(unmapped->why == "grant 3 of node 'node-a' has no map to write into");
  g.map = std::numeric_limits<std::uint64_t>::max() - 50;
  CHECK(check_claim(g, "node-b", grant_op::write, 0, 1));
  g.map = 1ull << 40;
  CHECK_FALSE(check_claim(g, "node-b", grant_op::write, 0, 100));
}

TEST_CASE("grant: uses and answers cross the wire intact, and malformed ones are refused") {
  grant_request r{grant_op::read, 5, 1u << 20, 0xdead0000};
  auto bytes = encode(r);
  CHECK(bytes.size() == grant_request_size);
  std::string error;
  auto back = decode_grant_request(bytes, error);
  REQUIRE(back);
  CHECK(back->op == grant_op::read);
  CHECK(back->offset == 5);
  CHECK(back->length == 1u << 20);
  CHECK(back->destination == 0xdead0000);

  auto short_one = bytes;
  short_one.pop_back();
  CHECK_FALSE(decode_grant_request(short_one, error));
  CHECK(error == "a grant use of 24 bytes, not 25");
  auto odd = bytes;
  odd[0] = 9;
  CHECK_FALSE(decode_grant_request(odd, error));
  CHECK(error == "a grant use of unknown kind 9");
  auto write_to = encode(grant_request{grant_op::write, 0, 1, 42});
  CHECK_FALSE(decode_grant_request(write_to, error));
  CHECK(error == "a grant write with a destination");

  // A write or an atomic carries its `then` message; a read may not.
  grant_request w{grant_op::write, 64, 4096, 0};
  w.then_to = 77;
  w.then_body = {1, 2, 3};
  auto with_then = encode(w);
  CHECK(with_then.size() == grant_request_size + 8 + 3);
  auto got = decode_grant_request(with_then, error);
  REQUIRE(got);
  CHECK(got->then_to == 77);
  CHECK(got->then_body == std::vector<unsigned char>{1, 2, 3});
  auto cut = with_then;
  cut.resize(grant_request_size + 5);
  CHECK_FALSE(decode_grant_request(cut, error));
  CHECK(error == "a grant use of 30 bytes: 25, or at least 33 with a then message");
  auto to_nobody = w;
  to_nobody.then_to = 0;
  auto nobody = encode(to_nobody);
  nobody.resize(grant_request_size);
  for (int i = 0; i < 8; ++i)
    nobody.push_back(0);
  CHECK_FALSE(decode_grant_request(nobody, error));
  CHECK(error == "a grant use's then message for actor 0");
  auto read_then = r;
  read_then.then_to = 5;
  CHECK_FALSE(decode_grant_request(encode(read_then), error));
  CHECK(error == "a grant read carrying its then message");

  // A read or an atomic the holder did one-sided comes as a notice, marked
  // done; a done read may carry its `then` (the bytes are at the holder
  // already), a write is never done one-sided.
  auto done_read = read_then;
  done_read.done = true;
  auto notice = encode(done_read);
  CHECK(notice[0] == (static_cast<unsigned char>(grant_op::read) | done_flag));
  auto seen = decode_grant_request(notice, error);
  REQUIRE(seen);
  CHECK(seen->done);
  CHECK(seen->op == grant_op::read);
  CHECK(seen->then_to == 5);
  CHECK_FALSE(decode_grant_request(bytes, error)->done);
  auto done_write = w;
  done_write.done = true;
  CHECK_FALSE(decode_grant_request(encode(done_write), error));
  CHECK(error == "a grant write marked done (only reads and atomics are done one-sided)");
  auto odd_done = bytes;
  odd_done[0] = 9 | done_flag;
  CHECK_FALSE(decode_grant_request(odd_done, error));
  CHECK(error == "a grant use of unknown kind 137");

  auto answer = encode(grant_answer{grant_status::out_of_range, "too far"});
  auto a = decode_grant_answer(answer, error);
  REQUIRE(a);
  CHECK(a->st == grant_status::out_of_range);
  CHECK(a->detail == "too far");
  // A long detail is cut, not refused by our own peer.
  auto longer = encode(grant_answer{grant_status::remote_error, std::string(2000, 'x')});
  CHECK(longer.size() == 1 + max_grant_detail);
  CHECK(decode_grant_answer(longer, error));
  answer[0] = 6;
  CHECK_FALSE(decode_grant_answer(answer, error));
  CHECK(error == "unknown grant status 6");
  CHECK_FALSE(decode_grant_answer({}, error));
  longer.push_back('x');
  CHECK_FALSE(decode_grant_answer(longer, error));
}

TEST_CASE("grant: its envelopes carry no buffers") {
  envelope e;
  e.kind = envelope_kind::grant_use;
  e.receiver = 4;
  e.request_id = 9;
  e.body = encode(grant_request{grant_op::write, 0, 10, 0});
  envelope_limits l;
  l.arena_size = 1 << 20;
  l.max_body = 4096;
  l.max_buffers = 8;
  std::vector<unsigned char> bytes;
  encode(e, bytes);
  envelope_decoder ok(l);
  ok.feed(bytes.data(), bytes.size());
  auto got = ok.next();
  REQUIRE(got);
  CHECK(got->kind == envelope_kind::grant_use);
  CHECK(got->body == e.body);
  e.kind = envelope_kind::grant_status;
  e.buffers = {{0, 64}};
  bytes.clear();
  encode(e, bytes);
  envelope_decoder bad(l);
  bad.feed(bytes.data(), bytes.size());
  CHECK_FALSE(bad.next());
  CHECK(bad.error() == "envelope 1: a grant status carries no buffers");
}

TEST_CASE("grant: atomics need both rights, 8 bytes, and a word aligned in memory") {
  grant_table t;
  auto g = given_to("node-b", 1, 64, rw);
  auto misaligned_by = reinterpret_cast<std::uintptr_t>(g.region.data()) % 8;
  auto aligned = misaligned_by == 0 ? 0 : 8 - misaligned_by;
  auto id = t.add(g);
  auto ro_id = t.add(given_to("node-b", 1, 64, ro));
  CHECK(t.use(id, "node-b", 1, grant_op::fetch_add, aligned, 8).st == grant_status::ok);
  CHECK(t.use(id, "node-b", 1, grant_op::compare_swap, aligned + 8, 8).st == grant_status::ok);
  auto odd = t.use(id, "node-b", 1, grant_op::fetch_add, aligned + 3, 8);
  CHECK(odd.st == grant_status::refused);
  CHECK(odd.why.find("an atomic needs an 8-byte word aligned in memory") == 0);
  CHECK(t.use(id, "node-b", 1, grant_op::fetch_add, aligned, 4).st == grant_status::refused);
  CHECK(t.use(id, "node-b", 1, grant_op::fetch_add, 60, 8).st == grant_status::out_of_range);
  auto read_only = t.use(ro_id, "node-b", 1, grant_op::fetch_add, 0, 8);
  CHECK(read_only.st == grant_status::refused);
  CHECK(read_only.why == "grant 2 does not allow atomics");

  auto swap = encode(grant_request{grant_op::compare_swap, 16, 8, 5, 6});
  CHECK(swap.size() == grant_swap_size);
  std::string error;
  auto back = decode_grant_request(swap, error);
  REQUIRE(back);
  CHECK(back->destination == 5);
  CHECK(back->swap == 6);
  swap.pop_back();
  CHECK_FALSE(decode_grant_request(swap, error));
  CHECK(error == "a grant use of 32 bytes, not 33");
  auto add = encode(grant_request{grant_op::fetch_add, 16, 8, 1, 0});
  CHECK(add.size() == grant_request_size);
}
