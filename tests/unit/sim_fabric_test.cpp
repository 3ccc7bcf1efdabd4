// The simulated fabric itself: it must fail the way RC queue pairs fail, or
// the engine's tests prove nothing.
#include <fabric.hpp>

#include <doctest/doctest.h>

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
