// The simulated fabric itself: it must fail the way RC queue pairs fail, or
// the engine's tests prove nothing.
#include <fabric.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

using namespace riomesh;
using engine::completion_status;
using engine::work;
using engine::work_kind;

namespace {

struct net {
  sim::fabric f{42, 16, 16, 2};
  std::vector<unsigned char> src = std::vector<unsigned char>(64, 'a');
  std::vector<unsigned char> dst = std::vector<unsigned char>(64, 0);
  engine::region local = f.side(0).register_memory(src.data(), src.size(), false);
  engine::region remote = f.side(1).register_memory(dst.data(), dst.size(), true);

  work write(std::uint64_t id, std::uint64_t offset, std::uint32_t len, bool imm = false) {
    work w;
    w.kind = imm ? work_kind::write_with_imm : work_kind::write;
    w.wr_id = id;
    w.remote_addr = remote.addr() + offset;
    w.rkey = remote.rkey;
    w.imm = len;
    w.num_sge = len ? 1 : 0;
    w.sge[0] = {local.addr(), len, local.lkey};
    return w;
  }
  void run() {
    while (f.step()) {
    }
  }
  std::vector<sim::completion> done(int side) { return f.side(side).poll(100); }
};

}  // namespace

TEST_CASE("writes land in order and complete in order") {
  net n;
  n.f.side(1).post({work_kind::post_recv, 0, 0, 0, 0, 0, false, {}, 1});
  n.f.side(0).post(n.write(1, 0, 8));
  n.f.side(0).post(n.write(2, 8, 8, true));
  n.run();
  auto a = n.done(0);
  REQUIRE(a.size() == 2);
  CHECK(a[0].send.wr_id == 1);
  CHECK(a[1].send.wr_id == 2);
  auto b = n.done(1);
  REQUIRE(b.size() == 1);
  CHECK(b[0].recv.imm == 8);
  CHECK(b[0].recv.byte_len == 8);
  CHECK(n.dst[15] == 'a');
  CHECK(n.dst[16] == 0);
}

TEST_CASE("a bad key or an out-of-bounds write is a remote access error, the QP fails") {
  net n;
  auto bad = n.write(1, 0, 8);
  bad.rkey = 999;
  n.f.side(0).post(bad);
  n.f.side(0).post(n.write(2, 0, 8));
  n.run();
  auto a = n.done(0);
  REQUIRE(a.size() == 2);
  CHECK(a[0].send.status == completion_status::remote_access);
  CHECK(a[1].send.status == completion_status::flushed);
  CHECK(n.f.side(0).in_error());
  CHECK(n.dst[0] == 0);

  net m;
  m.f.side(0).post(m.write(1, 60, 8));  // 4 bytes past the end
  m.run();
  CHECK(m.done(0)[0].send.status == completion_status::remote_access);
  CHECK(m.dst[60] == 0);
  m.f.side(0).post(m.write(2, 0, 1));  // posting to a failed QP flushes at once
  CHECK(m.done(0)[0].send.status == completion_status::flushed);
}

TEST_CASE("write with immediate and no receive: retried, then receiver-not-ready") {
  net n;  // rnr_retry 2
  n.f.side(0).post(n.write(1, 0, 4, true));
  for (int attempt = 0; attempt < 3; ++attempt) {  // each step is one try
    CHECK(n.done(0).empty());
    n.f.step();
  }
  auto a = n.done(0);
  REQUIRE(a.size() == 1);
  CHECK(a[0].send.status == completion_status::rnr_retry_exceeded);
  CHECK(n.f.side(0).stats().rnr_naks == 3);
}

TEST_CASE("with rnr_retry 7 the write waits for a receive, and nothing passes it") {
  sim::fabric f{1, 16, 16, 7};
  std::vector<unsigned char> src(8, 'z'), dst(8, 0);
  auto l = f.side(0).register_memory(src.data(), 8, false);
  auto r = f.side(1).register_memory(dst.data(), 8, true);
  work w;
  w.kind = work_kind::write_with_imm;
  w.wr_id = 1;
  w.remote_addr = r.addr();
  w.rkey = r.rkey;
  w.num_sge = 1;
  w.sge[0] = {l.addr(), 4, l.lkey};
  f.side(0).post(w);
  work plain = w;
  plain.kind = work_kind::write;
  plain.wr_id = 2;
  plain.remote_addr = r.addr() + 4;
  f.side(0).post(plain);
  for (int i = 0; i < 50; ++i)
    f.step();
  CHECK(f.side(0).poll(10).empty());
  CHECK(dst[4] == 0);  // in order: the plain write waits behind it
  f.side(1).post({work_kind::post_recv, 0, 0, 0, 0, 0, false, {}, 1});
  while (f.step()) {
  }
  CHECK(f.side(0).poll(10).size() == 2);
  CHECK(dst[4] == 'z');
}

TEST_CASE("a zero-length write needs no valid key (keepalive)") {
  net n;
  work w;
  w.kind = work_kind::write;
  w.wr_id = 5;
  n.f.side(0).post(w);
  n.run();
  CHECK(n.done(0)[0].send.status == completion_status::success);
}

TEST_CASE("a cut fails what is outstanding and flushes receives") {
  net n;
  n.f.side(1).post({work_kind::post_recv, 0, 0, 0, 0, 0, false, {}, 2});
  n.f.side(0).post(n.write(1, 0, 8));
  n.f.side(0).post(n.write(2, 8, 8));
  n.f.cut("test");
  auto a = n.done(0);
  REQUIRE(a.size() == 2);
  CHECK(a[0].send.status == completion_status::retry_exceeded);
  CHECK(a[1].send.status == completion_status::flushed);
  auto b = n.done(1);
  REQUIRE(b.size() == 2);
  CHECK(b[0].recv.status == completion_status::flushed);
  CHECK_FALSE(n.f.step());
}

TEST_CASE(
    "reads and atomics need their access, atomics an aligned word, and the old value comes back") {
  sim::fabric f{7, 16, 16, 2};
  alignas(8) unsigned char theirs[64];
  alignas(8) unsigned char mine[64] = {};
  for (int i = 0; i < 64; ++i)
    theirs[i] = static_cast<unsigned char>(i);
  auto local = f.side(0).register_memory(mine, sizeof mine, false);
  auto readable = f.side(1).register_memory(theirs, sizeof theirs, false, true, true);
  auto run = [&] {
    while (f.step()) {
    }
  };
  // A read scattered into two SGEs.
  work r;
  r.kind = work_kind::read;
  r.wr_id = 1;
  r.remote_addr = readable.addr() + 10;
  r.rkey = readable.rkey;
  r.num_sge = 2;
  r.sge[0] = {local.addr() + 40, 3, local.lkey};
  r.sge[1] = {local.addr(), 5, local.lkey};
  f.side(0).post(r);
  run();
  REQUIRE(f.side(0).poll(10).at(0).send.status == completion_status::success);
  CHECK(mine[40] == 10);
  CHECK(mine[42] == 12);
  CHECK(mine[0] == 13);
  CHECK(mine[4] == 17);
  // fetch-and-add, then compare-and-swap that matches and one that does not.
  std::uint64_t word = 0;
  std::memcpy(&word, theirs + 8, 8);
  auto atomic = [&](work_kind k, std::uint64_t a, std::uint64_t b) {
    work w;
    w.kind = k;
    w.wr_id = 2;
    w.remote_addr = readable.addr() + 8;
    w.rkey = readable.rkey;
    w.num_sge = 1;
    w.sge[0] = {local.addr() + 48, 8, local.lkey};
    w.compare_add = a;
    w.swap = b;
    f.side(0).post(w);
    run();
    auto c = f.side(0).poll(10);
    REQUIRE(c.size() == 1);
    CHECK(c[0].send.status == completion_status::success);
    std::uint64_t old = 0;
    std::memcpy(&old, mine + 48, 8);
    return old;
  };
  CHECK(atomic(work_kind::fetch_add, 5, 0) == word);
  CHECK(atomic(work_kind::compare_swap, word + 5, 77) == word + 5);
  CHECK(atomic(work_kind::compare_swap, 1, 99) == 77);
  std::uint64_t now = 0;
  std::memcpy(&now, theirs + 8, 8);
  CHECK(now == 77);
  // Memory registered for writes only cannot be read.
  unsigned char write_only[16] = {};
  auto w_only = f.side(1).register_memory(write_only, sizeof write_only, true);
  r.remote_addr = w_only.addr();
  r.rkey = w_only.rkey;
  r.num_sge = 1;
  r.sge[0] = {local.addr(), 8, local.lkey};
  f.side(0).post(r);
  run();
  CHECK(f.side(0).poll(10).at(0).send.status == completion_status::remote_access);
}

TEST_CASE("an atomic on a word that is not 8-byte aligned fails the requester") {
  sim::fabric f{8, 16, 16, 2};
  alignas(8) unsigned char theirs[32] = {};
  alignas(8) unsigned char mine[8] = {};
  auto local = f.side(0).register_memory(mine, sizeof mine, false);
  auto remote = f.side(1).register_memory(theirs, sizeof theirs, false, true, true);
  work w;
  w.kind = work_kind::fetch_add;
  w.wr_id = 1;
  w.remote_addr = remote.addr() + 4;
  w.rkey = remote.rkey;
  w.num_sge = 1;
  w.sge[0] = {local.addr(), 8, local.lkey};
  w.compare_add = 1;
  f.side(0).post(w);
  while (f.step()) {
  }
  CHECK(f.side(0).poll(10).at(0).send.status == completion_status::local_error);
  CHECK(theirs[4] == 0);
}
