// riomap, riounmap and riowrite (rsocket-wire.md §4).
#include "engine_fixture.hpp"

using namespace riomesh;
using namespace riomesh::test;

namespace {

std::vector<unsigned char> buffer(4096);
region mapped(std::size_t length = 4096, std::uint32_t rkey = 31) {
  return {buffer.data(), length, rkey, rkey};
}

wire::iomap_entry entry_of(const work& w) {
  REQUIRE(w.num_sge == 1);
  REQUIRE(w.sge[0].length == 24);
  return wire::decode_iomap_entry(reinterpret_cast<const unsigned char*>(w.sge[0].addr),
                                  wire::host_order());
}

}  // namespace

TEST_CASE("riomap publishes the entry into the peer's slot with IOMAP_SGL") {
  lone_engine t;
  t.take();
  auto m = t.eng.riomap(mapped(), true, 1000);
  CHECK(m.st == status::ok);
  CHECK(m.offset == 1000);
  CHECK(m.index == 0);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].kind == work_kind::write_with_imm);
  CHECK(w[0].imm == 0xc0000000u);
  CHECK(w[0].remote_addr == peer_target_list + 32);
  CHECK(w[0].rkey == peer_target_key);
  CHECK(entry_of(w[0]) ==
        wire::iomap_entry{1000, {reinterpret_cast<std::uint64_t>(buffer.data()), 31, 4096}});
  CHECK(t.eng.state().sends == 1);  // counted: this peer counts it back
}

TEST_CASE("toward a plain rsocket an iomap publication does not spend a credit") {
  peer_setup peer;
  peer.counts_iomap = false;
  lone_engine t({}, 128 * 1024, 256 * 1024, peer);
  t.take();
  CHECK(t.eng.riomap(mapped(), true).st == status::ok);
  CHECK(t.take().size() == 1);
  CHECK(t.eng.state().sends == 0);
}

TEST_CASE("riomap: any offset, overlaps, a full table, local-only maps") {
  lone_engine t;  // the peer offers 2 slots
  t.take();
  auto any = t.eng.riomap(mapped(100), true);
  CHECK(any.offset == reinterpret_cast<std::uint64_t>(buffer.data()));
  CHECK(t.eng.riomap(mapped(4096), true, any.offset + 50).st == status::invalid);
  auto second = t.eng.riomap(mapped(4096), true, 0);
  CHECK(second.index == 1);
  CHECK(t.eng.riomap(mapped(10), true, 1u << 30).st == status::no_space);
  auto local = t.eng.riomap(mapped(10), false, 1u << 30);
  CHECK(local.st == status::ok);
  CHECK(local.index == -1);
  CHECK(t.take().size() == 2);  // only the two remote-writable maps travel
  CHECK(t.eng.riomap({buffer.data(), 0, 1, 1}, true).st == status::invalid);
}

TEST_CASE("riounmap clears the peer's slot and frees it for the next map") {
  lone_engine t;
  t.take();
  t.eng.riomap(mapped(), true, 0);
  t.take();
  CHECK(t.eng.riounmap(reinterpret_cast<std::uint64_t>(buffer.data()), 4096) == status::ok);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == 0xc0000000u);
  CHECK(entry_of(w[0]) == wire::iomap_entry{});
  CHECK(t.eng.riounmap(reinterpret_cast<std::uint64_t>(buffer.data()), 4096) == status::invalid);
  CHECK(t.eng.riomap(mapped(), true, 0).index == 0);
}

TEST_CASE("riowrite splits at entry ends and reports its token once all is placed") {
  params p;
  p.iomap_slots = 2;
  lone_engine t(p);
  t.complete_all();
  t.iomap_slot(0, {0, {0x500000, 41, 100}});
  t.iomap_slot(1, {100, {0x600000, 42, 100}});
  std::vector<unsigned char> src(150);
  local_sge source{reinterpret_cast<std::uint64_t>(src.data()), 150, 77};
  auto r = t.eng.riowrite(source, 50, 7);
  CHECK(r.st == status::ok);
  CHECK(r.bytes == 150);
  auto w = t.take();
  REQUIRE(w.size() == 2);
  CHECK(w[0].kind == work_kind::write);
  CHECK(w[0].remote_addr == 0x500000 + 50);
  CHECK(w[0].rkey == 41);
  CHECK(w[0].length() == 50);
  CHECK(w[0].sge[0].addr == source.addr);  // zero copy: straight from the source
  CHECK(w[0].sge[0].lkey == 77);
  CHECK(w[1].remote_addr == 0x600000);
  CHECK(w[1].rkey == 42);
  CHECK(w[1].length() == 100);
  CHECK(w[1].sge[0].addr == source.addr + 50);
  t.eng.on_send_completion({w[0].wr_id, completion_status::success, {}});
  CHECK(t.events().empty());
  t.eng.on_send_completion({w[1].wr_id, completion_status::success, {}});
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::iowrite_done);
  CHECK(ev[0].token == 7);
  CHECK(ev[0].bytes == 150);
}

TEST_CASE("riowrite of pieces: they share work requests up to max_sge, split at entry ends") {
  params p;
  p.iomap_slots = 2;
  p.max_sge = 3;
  lone_engine t(p);
  t.complete_all();
  t.iomap_slot(0, {0, {0x500000, 41, 100}});
  t.iomap_slot(1, {100, {0x600000, 42, 1000}});
  // 7 pieces, 230 bytes, written at 40: 60 bytes to the first entry's end,
  // then 170 in the second.
  std::vector<unsigned char> src(1000);
  std::vector<local_sge> pieces;
  std::size_t at = 0;
  for (std::uint32_t n : {10u, 30u, 5u, 25u, 60u, 40u, 60u}) {
    pieces.push_back({reinterpret_cast<std::uint64_t>(src.data() + at + 3), n, 100 + n});
    at += n + 7;  // not contiguous in memory
  }
  auto r = t.eng.riowrite_sges(pieces.data(), pieces.size(), 40, 9);
  CHECK(r.st == status::ok);
  CHECK(r.bytes == 230);
  auto w = t.take();
  // The first entry's 60 bytes: 10 + 30 + 5 of the third piece... cut at 3
  // entries: 10, 30, 5 (45), then 15 of the fourth; then the second entry.
  REQUIRE(w.size() == 4);
  CHECK(w[0].num_sge == 3);
  CHECK(w[0].length() == 45);
  CHECK(w[0].remote_addr == 0x500000 + 40);
  CHECK(w[1].num_sge == 1);
  CHECK(w[1].length() == 15);
  CHECK(w[1].sge[0].addr == pieces[3].addr);
  CHECK(w[1].remote_addr == 0x500000 + 85);
  CHECK(w[2].remote_addr == 0x600000);
  CHECK(w[2].num_sge == 3);
  CHECK(w[2].sge[0].addr == pieces[3].addr + 15);
  CHECK(w[2].sge[0].length == 10);
  CHECK(w[2].sge[0].lkey == 125);
  CHECK(w[2].length() == 110);
  CHECK(w[3].num_sge == 1);
  CHECK(w[3].length() == 60);
  CHECK(w[3].remote_addr == 0x600000 + 110);
  std::uint64_t total = 0;
  for (auto& x : w)
    total += x.length();
  CHECK(total == 230);
  for (auto& x : w)
    t.eng.on_send_completion({x.wr_id, completion_status::success, {}});
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].token == 9);
  CHECK(ev[0].bytes == 230);
}

TEST_CASE("riowrite outside every mapping writes nothing") {
  params p;
  p.iomap_slots = 2;
  lone_engine t(p);
  t.take();
  t.iomap_slot(1, {1000, {0x500000, 41, 100}});
  std::vector<unsigned char> src(150);
  local_sge source{reinterpret_cast<std::uint64_t>(src.data()), 150, 77};
  CHECK(t.eng.riowrite(source, 5000, 1).st == status::no_mapping);
  CHECK(t.take().empty());
  auto partial = t.eng.riowrite(source, 1050, 2);  // runs off the end of the mapping
  CHECK(partial.st == status::no_mapping);
  CHECK(partial.bytes == 50);
  CHECK(t.eng.riowrite(source, ~0ull - 10, 3).st == status::invalid);  // wraps past 2^64
}

TEST_CASE("riowrite_copy stages through the send ring") {
  params p;
  p.iomap_slots = 1;
  lone_engine t(p);
  t.take();
  t.iomap_slot(0, {0, {0x500000, 41, 1u << 20}});
  std::vector<unsigned char> src(5000, 3);
  CHECK(t.eng.riowrite_copy(src.data(), src.size(), 10).bytes == 5000);
  auto w = t.take();
  CHECK(lengths(w) == std::vector<std::uint32_t>{2048, 2952});
  CHECK(w[0].sge[0].lkey == send_lkey);
  CHECK(w[1].remote_addr == 0x500000 + 10 + 2048);
}

TEST_CASE("inbound IOMAP_SGL counts as consumed and is reported") {
  params p;
  p.iomap_slots = 2;
  lone_engine t(p);
  t.take();
  t.iomap_slot(1, {7, {0x500000, 41, 100}});
  t.imm(0xc0000001u, 24);
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::peer_iomap);
  CHECK(ev[0].index == 1);
  CHECK(t.eng.state().consumed == 1);
  CHECK(t.eng.target_iomap(1) == wire::iomap_entry{7, {0x500000, 41, 100}});
}

TEST_CASE(
    "rioread splits at entry ends, scatters up to max_sge, and is refused without read depth") {
  params p;
  p.iomap_slots = 2;
  p.max_sge = 2;
  {
    lone_engine none(p);
    none.complete_all();
    none.iomap_slot(0, {0, {0x500000, 41, 100}});
    std::vector<unsigned char> into(10);
    local_sge dest{reinterpret_cast<std::uint64_t>(into.data()), 10, 5};
    CHECK(none.eng.rioread(&dest, 1, 0, 1).st == status::unsupported);
    local_sge result{reinterpret_cast<std::uint64_t>(into.data()), 8, 5};
    CHECK(none.eng.rioatomic(work_kind::fetch_add, result, 0, 1, 0, 1).st == status::unsupported);
  }
  p.max_rd_atomic = 4;
  lone_engine t(p);
  t.complete_all();
  t.iomap_slot(0, {0, {0x500000, 41, 100}});
  t.iomap_slot(1, {100, {0x600000, 42, 100}});
  std::vector<unsigned char> into(200);
  // 150 bytes from offset 50, into three destinations of 20, 60 and 70.
  local_sge dests[3] = {{reinterpret_cast<std::uint64_t>(into.data()), 20, 7},
                        {reinterpret_cast<std::uint64_t>(into.data()) + 30, 60, 8},
                        {reinterpret_cast<std::uint64_t>(into.data()) + 100, 70, 9}};
  auto r = t.eng.rioread(dests, 3, 50, 11);
  CHECK(r.st == status::ok);
  CHECK(r.bytes == 150);
  auto w = t.take();
  // The first entry's 50 bytes: 20 + 30 of the second destination (two
  // SGEs); then the second entry's 100: 30 + 70.
  REQUIRE(w.size() == 2);
  CHECK(w[0].kind == work_kind::read);
  CHECK(w[0].remote_addr == 0x500000 + 50);
  CHECK(w[0].rkey == 41);
  CHECK(w[0].num_sge == 2);
  CHECK(w[0].length() == 50);
  CHECK(w[1].remote_addr == 0x600000);
  CHECK(w[1].rkey == 42);
  CHECK(w[1].sge[0].addr == dests[1].addr + 30);
  CHECK(w[1].sge[1].lkey == 9);
  CHECK(w[1].length() == 100);
  t.eng.on_send_completion({w[0].wr_id, completion_status::success, {}});
  CHECK(t.events().empty());
  t.eng.on_send_completion({w[1].wr_id, completion_status::success, {}});
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::ioread_done);
  CHECK(ev[0].token == 11);
  CHECK(ev[0].bytes == 150);
  CHECK(t.eng.rioread(dests, 1, 5000, 12).st == status::no_mapping);
}

TEST_CASE("rioatomic: an aligned mapped word, its operands, and its token back") {
  params p;
  p.iomap_slots = 1;
  p.max_rd_atomic = 1;
  lone_engine t(p);
  t.complete_all();
  t.iomap_slot(0, {1000, {0x500000, 41, 64}});
  alignas(8) unsigned char result[8];
  local_sge res{reinterpret_cast<std::uint64_t>(result), 8, 3};
  CHECK(t.eng.rioatomic(work_kind::compare_swap, res, 1004, 1, 2, 1).st == status::invalid);
  CHECK(t.eng.rioatomic(work_kind::compare_swap, res, 1060, 1, 2, 1).st == status::invalid);
  CHECK(t.eng.rioatomic(work_kind::compare_swap, res, 2000, 1, 2, 1).st == status::no_mapping);
  CHECK(t.eng.rioatomic(work_kind::read, res, 1008, 1, 2, 1).st == status::invalid);
  auto r = t.eng.rioatomic(work_kind::compare_swap, res, 1008, 5, 6, 21);
  CHECK(r.st == status::ok);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].kind == work_kind::compare_swap);
  CHECK(w[0].remote_addr == 0x500000 + 8);
  CHECK(w[0].compare_add == 5);
  CHECK(w[0].swap == 6);
  CHECK(w[0].sge[0].addr == res.addr);
  t.eng.on_send_completion({w[0].wr_id, completion_status::success, {}});
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::ioatomic_done);
  CHECK(ev[0].token == 21);
}

TEST_CASE(
    "a read depth set once connected allows rioread, and what is posted behind a read or an "
    "atomic is fenced until they complete") {
  params p;
  p.iomap_slots = 1;
  lone_engine t(p);
  t.complete_all();
  t.iomap_slot(0, {0, {0x500000, 41, 64}});
  alignas(8) unsigned char into[16];
  local_sge dest{reinterpret_cast<std::uint64_t>(into), 16, 3};
  CHECK(t.eng.rioread(&dest, 1, 0, 1).st == status::unsupported);
  t.eng.set_read_depth(2);
  REQUIRE(t.eng.rioread(&dest, 1, 0, 1).st == status::ok);
  local_sge word{reinterpret_cast<std::uint64_t>(into), 8, 3};
  REQUIRE(t.eng.rioatomic(work_kind::fetch_add, word, 8, 1, 0, 2).st == status::ok);
  char msg[4] = {'n', 'o', 't', 'e'};
  REQUIRE(t.eng.send(msg, sizeof msg).st == status::ok);
  auto w = t.take();
  REQUIRE(w.size() == 3);
  CHECK_FALSE(w[0].fence);  // the read
  CHECK_FALSE(w[1].fence);  // the atomic: fences order writes only
  CHECK(w[2].kind == work_kind::write_with_imm);
  CHECK(w[2].fence);
  t.eng.on_send_completion({w[0].wr_id, completion_status::success, {}});
  REQUIRE(t.eng.send(msg, sizeof msg).st == status::ok);
  auto still = t.take();
  REQUIRE(still.size() == 1);
  CHECK(still[0].fence);  // the atomic is still out
  t.eng.on_send_completion({w[1].wr_id, completion_status::success, {}});
  t.eng.on_send_completion({w[2].wr_id, completion_status::success, {}});
  t.eng.on_send_completion({still[0].wr_id, completion_status::success, {}});
  REQUIRE(t.eng.send(msg, sizeof msg).st == status::ok);
  auto after = t.take();
  REQUIRE(after.size() == 1);
  CHECK_FALSE(after[0].fence);
}
