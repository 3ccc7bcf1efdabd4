// The stream rules of rsocket-wire.md §1-3, one at a time, against a scripted peer.
#include "engine_fixture.hpp"

using namespace riomesh;
using namespace riomesh::test;

TEST_CASE("connection data announces our ring, target list and credits") {
  params p;
  p.iomap_slots = 4;
  lone_engine t(p);
  auto cd = t.eng.local_conn_data();
  CHECK(cd.version == 1);
  CHECK(cd.flags == (wire::flag_iomap | wire::flag_iomap_credit));
  CHECK(cd.credits == 384);
  CHECK(cd.target_iomap_size == 4);
  CHECK(cd.target_sgl == wire::sge{reinterpret_cast<std::uint64_t>(t.target_list.data()), 11, 2});
  CHECK(cd.data_buf ==
        wire::sge{reinterpret_cast<std::uint64_t>(t.recv_ring.data()), ring_rkey, 65536});
  // All receives are posted before connecting: credits + control messages.
  REQUIRE(!t.posted.empty());
  CHECK(t.posted[0].kind == work_kind::post_recv);
  CHECK(t.posted[0].recv_count == 384 + 4);
}

TEST_CASE("the first update publishes half 1 into the peer's slot 1") {
  lone_engine t;
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].kind == work_kind::write_with_imm);
  CHECK(w[0].imm == 0x80000180u);  // SGL | (0 + 384)
  CHECK(w[0].remote_addr == peer_target_list + 16);
  CHECK(w[0].rkey == peer_target_key);
  CHECK(w[0].inline_data);
  CHECK(payload_sge(w[0]) ==
        wire::sge{reinterpret_cast<std::uint64_t>(t.recv_ring.data()) + 65536, ring_rkey, 65536});
}

TEST_CASE("send chunks start at 2048 and double up to 64 KiB") {
  params p;
  peer_setup peer;
  peer.half = 4u << 20;
  lone_engine t(p, 128 * 1024, 4u << 20, peer);
  t.take();
  std::vector<unsigned char> data(1u << 20, 7);
  CHECK(t.eng.send(data.data(), 65536).bytes == 65536);
  CHECK(lengths(t.take()) == std::vector<std::uint32_t>{2048, 4096, 8192, 16384, 32768, 2048});
  t.complete_all();
  CHECK(t.eng.send(data.data(), 3000).bytes == 3000);
  CHECK(lengths(t.take()) == std::vector<std::uint32_t>{2048, 952});
  CHECK(t.eng.send(data.data(), 4096).bytes == 4096);
  CHECK(lengths(t.take()) == std::vector<std::uint32_t>{2048, 2048});
  t.complete_all();
  CHECK(t.eng.send(data.data(), data.size()).bytes == data.size());
  auto w = t.take();
  CHECK(w.size() == 21);
  std::uint64_t next = peer_ring + 65536 + 3000 + 4096;
  for (const auto& x : w) {  // contiguous in the peer's half, DATA immediates
    CHECK(x.remote_addr == next);
    CHECK(x.rkey == peer_ring_key);
    CHECK(x.imm == x.length());
    next += x.length();
  }
}

TEST_CASE("chunks up to the inline size are posted inline") {
  lone_engine t;
  t.take();
  unsigned char small[64] = {};
  t.eng.send(small, 64);
  t.eng.send(small, 1);
  unsigned char big[65] = {};
  t.eng.send(big, 65);
  auto w = t.take();
  REQUIRE(w.size() == 3);
  CHECK(w[0].inline_data);
  CHECK(w[1].inline_data);
  CHECK_FALSE(w[2].inline_data);
  // Stream bytes are staged in the send ring: the caller's buffer is free.
  CHECK(w[2].sge[0].lkey == send_lkey);
}

TEST_CASE("a chunk never crosses the end of the peer's half") {
  peer_setup peer;
  peer.half = 5000;
  lone_engine t({}, 128 * 1024, 256 * 1024, peer);
  t.take();
  std::vector<unsigned char> data(6000, 1);
  auto r = t.eng.send(data.data(), data.size());
  CHECK(r.st == status::would_block);
  CHECK(r.bytes == 5000);
  CHECK(lengths(t.take()) == std::vector<std::uint32_t>{2048, 2952});
  CHECK_FALSE(t.eng.can_send());  // slot 1 not published yet
  t.publish(1, {0x300000, 23, 5000}, 384);
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::writable);
  CHECK(t.eng.send(data.data(), 1000).bytes == 1000);
  auto w = t.take();
  REQUIRE(w.size() == 2);
  CHECK(w[0].kind == work_kind::post_recv);  // for the update's receive
  w.erase(w.begin());
  CHECK(w[0].remote_addr == 0x300000);
  CHECK(w[0].rkey == 23);
}

TEST_CASE("no credit, no DATA: the send would block until the peer grants more") {
  peer_setup peer;
  peer.credits = 2;
  lone_engine t({}, 128 * 1024, 256 * 1024, peer);
  t.take();
  unsigned char byte = 0;
  CHECK(t.eng.send(&byte, 1).st == status::ok);
  CHECK(t.eng.send(&byte, 1).st == status::ok);
  auto r = t.eng.send(&byte, 1);
  CHECK(r.st == status::would_block);
  CHECK(r.bytes == 0);
  CHECK(t.eng.state().credit_stalls == 1);
  t.imm(0x80000000u | 3);  // the peer consumed one: limit 1 + 2
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::writable);
  CHECK(t.eng.send(&byte, 1).st == status::ok);
  CHECK(t.eng.send(&byte, 1).st == status::would_block);
}

TEST_CASE("a credit-only update goes out after half the credits are consumed") {
  params p;
  p.rq_size = 8;
  lone_engine t(p);
  t.take();
  for (int i = 0; i < 4; ++i)
    t.data(10 * i, 10);
  CHECK(t.take().size() == 1);  // only receive re-posts so far
  unsigned char out[40];
  CHECK(t.eng.recv(out, 40).bytes == 40);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == (0x80000000u | (4 + 8)));
  CHECK(w[0].num_sge == 0);
  CHECK(w[0].remote_addr == peer_target_list);
}

TEST_CASE("receives are re-posted one for one, batched") {
  lone_engine t;
  t.take();
  t.data(0, 5);
  t.data(5, 5);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].kind == work_kind::post_recv);
  CHECK(w[0].recv_count == 2);
}

TEST_CASE("a half goes back to the peer once it has been read, slots alternating") {
  lone_engine t({}, 128);  // H = 64
  t.take();
  t.data(0, 64);
  unsigned char out[64];
  CHECK(t.eng.recv(out, 30).bytes == 30);  // partial reads count, but not enough yet
  CHECK(t.take().size() == 1);             // the receive re-post
  CHECK(t.eng.recv(out, 64).bytes == 34);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == (0x80000000u | (1 + 384)));
  CHECK(w[0].remote_addr == peer_target_list);  // slot 0 this time
  CHECK(payload_sge(w[0]) ==
        wire::sge{reinterpret_cast<std::uint64_t>(t.recv_ring.data()), ring_rkey, 64});
  t.complete_all();
  t.data(64, 64, 'y');
  CHECK(t.eng.recv(out, 64).bytes == 64);
  CHECK(out[0] == 'y');
  w = t.take();
  REQUIRE(w.size() == 2);
  CHECK(w[1].remote_addr == peer_target_list + 16);  // back to slot 1
}

TEST_CASE("peek and consume read in place") {
  lone_engine t;
  t.take();
  t.data(0, 10, 'a');
  t.data(10, 5, 'b');
  auto [p, n] = t.eng.peek();
  CHECK(n == 10);
  CHECK(p == t.recv_ring.data());
  t.eng.consume(12);
  auto [q, m] = t.eng.peek();
  CHECK(m == 3);
  CHECK(*q == 'b');
  CHECK(t.eng.readable_bytes() == 3);
}

namespace {

// Feeds one inbound message to a fresh engine and returns why it closed.
template <class Setup>
std::string rejected(Setup&& setup, params p = {}, std::size_t ring = 128 * 1024) {
  lone_engine t(p, ring);
  t.take();
  setup(t);
  CHECK(t.eng.closed());
  auto ev = t.events();
  CHECK((!ev.empty() && ev.back().kind == event_kind::closed));
  unsigned char byte = 0;
  CHECK(t.eng.send(&byte, 1).st == status::closed);
  return t.eng.reason();
}

}  // namespace

TEST_CASE("inbound messages that contradict the state close the channel") {
  // Half 0 came with the connection data, half 1 with the first update.
  CHECK(rejected([](lone_engine& t) { t.data(0, 64), t.data(64, 64), t.data(0, 1); }, {}, 128) ==
        "protocol error: DATA of 1 bytes exceeds the published space (0 bytes left)");
  CHECK(rejected([](lone_engine& t) { t.data(0, 65537); }) ==
        "protocol error: DATA of 65537 bytes crosses the end of a published half");
  CHECK(rejected([](lone_engine& t) { t.data(0, 40), t.data(40, 30); }, {}, 128) ==
        "protocol error: DATA of 30 bytes crosses the end of a published half");
  CHECK(rejected([](lone_engine& t) { t.imm(0, 0); }) == "protocol error: zero-length DATA");
  CHECK(rejected([](lone_engine& t) { t.imm(10, 12); }) ==
        "protocol error: DATA immediate says 10 bytes, the write carried 12");
  params rq2;
  rq2.rq_size = 2;
  CHECK(rejected([](lone_engine& t) { t.data(0, 1), t.data(1, 1), t.data(2, 1); }, rq2) ==
        "protocol error: DATA beyond the 2 credits granted");
  CHECK(rejected([](lone_engine& t) { t.imm(0x20000010u, 16); }) ==
        "protocol error: unknown op 1 (immediate 0x20000010)");
  CHECK(rejected([](lone_engine& t) { t.imm(0x40000000u, 0); }) ==
        "protocol error: unknown op 2 (immediate 0x40000000)");
  CHECK(rejected([](lone_engine& t) { t.imm(0xe0000005u); }) ==
        "protocol error: unknown control code 5");
  CHECK(rejected([](lone_engine& t) { t.imm(0x80000000u | 400); }) ==
        "protocol error: credit limit 400 grants 400 credits, beyond the peer's queue of 384");
  CHECK(rejected([](lone_engine& t) { t.imm(0x80000000u | 384, 7); }) ==
        "protocol error: SGL update of 7 bytes");
  params slots;
  slots.iomap_slots = 4;
  CHECK(rejected([](lone_engine& t) { t.imm(0xc0000004u, 24); }, slots) ==
        "protocol error: IOMAP_SGL for slot 4, but 4 were offered");
  CHECK(rejected([](lone_engine& t) { t.imm(0xc0010000u, 24); }, slots) ==
        "protocol error: IOMAP_SGL for slot 65536, but 4 were offered");
}

TEST_CASE("connection data that cannot work is refused") {
  std::vector<unsigned char> tl(32), rr(128), sr(4096);
  engine::engine e({}, regions{{tl.data(), tl.size(), 1, 1},
                               {rr.data(), rr.size(), 2, 2},
                               {sr.data(), sr.size(), 3, 3}});
  wire::conn_data cd;
  cd.credits = 0;
  cd.target_sgl.length = 2;
  cd.data_buf.length = 64;
  CHECK_FALSE(e.start(cd));
  CHECK(e.reason() == "protocol error: the peer grants no credits");
  engine::engine f({}, regions{{tl.data(), tl.size(), 1, 1},
                               {rr.data(), rr.size(), 2, 2},
                               {sr.data(), sr.size(), 3, 3}});
  cd.credits = 8;
  cd.target_sgl.length = 1;
  CHECK_FALSE(f.start(cd));
  CHECK(f.reason() == "protocol error: the peer offers 1 target SGL slots (2 expected)");
}
