// Shutdown, disconnect, keepalive and errors (rsocket-wire.md §5).
#include "engine_fixture.hpp"

using namespace riomesh;
using namespace riomesh::test;

TEST_CASE("shutdown(write) sends SHUTDOWN and keeps reading") {
  lone_engine t;
  t.take();
  CHECK(t.eng.shutdown(shutdown_how::write) == status::ok);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == 0xe0000002u);
  CHECK(w[0].num_sge == 0);
  unsigned char byte = 1;
  CHECK(t.eng.send(&byte, 1).st == status::shut_down);
  t.data(0, 3);
  unsigned char out[3];
  CHECK(t.eng.recv(out, 3).bytes == 3);
  CHECK_FALSE(t.eng.closed());
}

TEST_CASE("shutdown(both) sends DISCONNECT, its completion closes the engine") {
  lone_engine t;
  t.take();
  t.eng.shutdown(shutdown_how::both);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == 0xe0000000u);
  CHECK_FALSE(t.eng.closed());
  t.complete_all();
  CHECK(t.eng.closed());
  CHECK_FALSE(t.eng.failed());
  CHECK(t.eng.reason() == "shut down locally");
  // Flushes after our own disconnect are expected, not errors.
  t.eng.on_recv_completion({0, 0, completion_status::flushed, "flushed"});
  CHECK_FALSE(t.eng.failed());
}

TEST_CASE("shutting down again says nothing more: one SHUTDOWN, one DISCONNECT") {
  lone_engine t;
  t.take();
  t.eng.shutdown(shutdown_how::write);
  t.eng.shutdown(shutdown_how::write);
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == 0xe0000002u);
  t.eng.shutdown(shutdown_how::both);
  t.eng.shutdown(shutdown_how::both);
  w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].imm == 0xe0000000u);
}

TEST_CASE("shutdown(read) alone says nothing to the peer, then write sends DISCONNECT") {
  lone_engine t;
  t.take();
  t.eng.shutdown(shutdown_how::read);
  CHECK(t.take().empty());
  unsigned char out[1];
  CHECK(t.eng.recv(out, 1).st == status::shut_down);
  t.data(0, 5);  // still taken in, and its space handed back
  CHECK(t.eng.readable_bytes() == 0);
  t.eng.shutdown(shutdown_how::write);
  auto w = t.take();
  REQUIRE(!w.empty());
  CHECK(w.back().imm == 0xe0000000u);
}

TEST_CASE("the peer's SHUTDOWN: end of stream after the queued bytes, we may still send") {
  lone_engine t;
  t.take();
  t.data(0, 4);
  t.imm(0xe0000002u);
  unsigned char out[8];
  auto r = t.eng.recv(out, 8);
  CHECK(r.bytes == 4);
  CHECK(t.eng.recv(out, 8).st == status::eof);
  unsigned char byte = 0;
  CHECK(t.eng.send(&byte, 1).st == status::ok);
  CHECK(t.eng.state().late_bytes == 0);
}

TEST_CASE("DATA after the peer's SHUTDOWN (librdmacm lets rsend do it): dropped and counted") {
  lone_engine t;
  t.take();
  t.data(0, 4);
  t.imm(0xe0000002u);
  unsigned char out[8];
  CHECK(t.eng.recv(out, 8).bytes == 4);
  auto consumed = t.eng.state().consumed;
  t.data(4, 3);  // late: after the end of the stream the reader saw
  CHECK_FALSE(t.eng.closed());
  CHECK(t.eng.reason().empty());
  CHECK(t.eng.recv(out, 8).st == status::eof);
  CHECK(t.eng.state().late_bytes == 3);
  // Its space and credit given back, as for bytes read.
  CHECK(t.eng.state().consumed == static_cast<std::uint16_t>(consumed + 1));
  unsigned char byte = 7;
  CHECK(t.eng.send(&byte, 1).st == status::ok);
  // Still bounded by the window: beyond the ring is a protocol error.
  auto beyond = static_cast<std::uint32_t>(t.recv_ring.size() + 1);
  t.eng.on_recv_completion({beyond, beyond, completion_status::success, {}});
  CHECK(t.eng.closed());
}

TEST_CASE("late DATA behind unread bytes: the reader gets the stream whole, then the end") {
  // Found across two hosts: the late bytes were dropped from the head of
  // the window, so the reader lost the stream's unread bytes instead.
  lone_engine t;
  t.take();
  t.data(0, 4, 'a');
  t.data(4, 2, 'b');
  t.imm(0xe0000002u);
  auto consumed = t.eng.state().consumed;
  t.data(6, 3, 'z');  // late
  CHECK(t.eng.state().late_bytes == 3);
  CHECK(t.eng.readable_bytes() == 6);
  unsigned char out[16] = {};
  auto r = t.eng.recv(out, 5);
  REQUIRE(r.bytes == 5);
  CHECK(std::string(reinterpret_cast<char*>(out), 5) == "aaaab");
  CHECK(t.eng.state().consumed == static_cast<std::uint16_t>(consumed + 1));
  r = t.eng.recv(out, 16);
  REQUIRE(r.bytes == 1);
  CHECK(out[0] == 'b');
  // The late message went with the last readable byte: space and credit back.
  CHECK(t.eng.state().consumed == static_cast<std::uint16_t>(consumed + 3));
  CHECK(t.eng.readable_bytes() == 0);
  CHECK(t.eng.recv(out, 16).st == status::eof);
  CHECK_FALSE(t.eng.closed());
}

TEST_CASE("the peer's DISCONNECT: closed for sending, queued bytes still readable") {
  lone_engine t;
  t.take();
  t.data(0, 4);
  t.imm(0xe0000000u);
  CHECK(t.eng.closed());
  CHECK_FALSE(t.eng.failed());
  CHECK(t.eng.reason() == "peer disconnected");
  unsigned char out[8];
  CHECK(t.eng.recv(out, 8).bytes == 4);
  CHECK(t.eng.recv(out, 8).st == status::eof);
  CHECK(t.eng.send(out, 1).st == status::closed);
}

TEST_CASE("errors close the engine with a reason, and every later call fails") {
  SUBCASE("a send completes with an error") {
    lone_engine t;
    unsigned char byte = 0;
    t.eng.send(&byte, 1);
    auto w = t.take();
    t.eng.on_send_completion({w[0].wr_id, completion_status::remote_access, "remote access error"});
    CHECK(t.eng.reason() == "send completion error: remote access error (remote access error)");
  }
  SUBCASE("receives are flushed") {
    lone_engine t;
    t.eng.on_recv_completion({0, 0, completion_status::flushed, "WR flushed"});
    CHECK(t.eng.reason() == "receive completion error: flushed (WR flushed)");
  }
  SUBCASE("the connection manager reports the peer gone") {
    lone_engine t;
    t.eng.on_disconnected("RDMA_CM_EVENT_DISCONNECTED");
    CHECK(t.eng.reason() == "peer gone: RDMA_CM_EVENT_DISCONNECTED");
  }
  SUBCASE("a completion that matches nothing posted") {
    lone_engine t;
    t.eng.on_send_completion({999, completion_status::success, {}});
    CHECK(t.eng.reason() == "completion for work request 999, which is not the oldest one posted");
  }
}

TEST_CASE("after an error every call reports closed") {
  lone_engine t;
  t.eng.on_disconnected("gone");
  unsigned char b[4] = {};
  CHECK(t.eng.send(b, 4).st == status::closed);
  CHECK(t.eng.recv(b, 4).st == status::closed);
  CHECK(t.eng.riowrite_copy(b, 4, 0).st == status::closed);
  CHECK(t.eng.riomap({b, 4, 1, 1}, true).st == status::closed);
  CHECK(t.eng.shutdown(shutdown_how::both) == status::closed);
  auto ev = t.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::closed);
}

TEST_CASE("keepalive: a zero-length WRITE to address 0, key 0, no immediate") {
  lone_engine t;
  t.take();
  t.eng.keepalive();
  auto w = t.take();
  REQUIRE(w.size() == 1);
  CHECK(w[0].kind == work_kind::write);
  CHECK(w[0].num_sge == 0);
  CHECK(w[0].remote_addr == 0);
  CHECK(w[0].rkey == 0);
}

TEST_CASE("control messages use their own slots: credit updates flow with the send queue full") {
  params p;
  p.sq_size = 8;  // 4 data, 4 control
  p.rq_size = 8;
  lone_engine t(p);
  t.complete_all();
  unsigned char b[8] = {};
  for (int i = 0; i < 4; ++i)
    CHECK(t.eng.send(b, 1).st == status::ok);
  CHECK(t.eng.send(b, 1).st == status::would_block);  // data slots full
  for (int i = 0; i < 4; ++i)
    t.data(i, 1);
  unsigned char out[4];
  t.eng.recv(out, 4);
  auto w = t.take();
  REQUIRE(!w.empty());
  CHECK(w.back().imm == (0x80000000u | (4 + 8)));  // the credit update still went out
}

TEST_CASE("both SHUTDOWNs through, ours acknowledged: the connection ends cleanly") {
  lone_engine t;
  t.take();
  t.data(0, 3);
  t.imm(0xe0000002u);  // the peer's SHUTDOWN first: it sends no more
  t.eng.shutdown(shutdown_how::write);
  CHECK_FALSE(t.eng.closed());  // ours not yet acknowledged: it could still be lost
  t.complete_all();
  CHECK(t.eng.closed());
  CHECK_FALSE(t.eng.failed());
  CHECK(t.eng.reason() == "both directions shut down");
  t.eng.on_disconnected("RDMA_CM_EVENT_DISCONNECTED");  // the peer's channel leaving
  CHECK_FALSE(t.eng.failed());
  unsigned char out[3];
  CHECK(t.eng.recv(out, 3).bytes == 3);
  CHECK(t.eng.recv(out, 3).st == status::eof);
}

TEST_CASE("a connection-manager disconnect after both SHUTDOWNs went out is a clean end") {
  // The peer closes once it has our SHUTDOWN, and disconnects without
  // waiting for the acknowledgement of our last writes to reach us.
  lone_engine t;
  t.take();
  t.imm(0xe0000002u);
  unsigned char byte = 0;
  t.eng.send(&byte, 1);  // not yet acknowledged
  t.eng.shutdown(shutdown_how::write);
  t.eng.on_disconnected("RDMA_CM_EVENT_DISCONNECTED");
  CHECK(t.eng.closed());
  CHECK_FALSE(t.eng.failed());
}

TEST_CASE("a connection-manager disconnect while the peer still sends is a failure") {
  lone_engine t;
  t.take();
  unsigned char byte = 0;
  t.eng.send(&byte, 1);
  t.eng.shutdown(shutdown_how::write);
  t.complete_all();
  t.eng.on_disconnected("RDMA_CM_EVENT_DISCONNECTED");
  CHECK(t.eng.failed());
  CHECK(t.eng.reason() == "peer gone: RDMA_CM_EVENT_DISCONNECTED");
}

TEST_CASE("a connection-manager disconnect after only the peer's SHUTDOWN: it stopped") {
  // A stopping node shuts its side down and disconnects without waiting for
  // ours. Its stream ended in order, so reads end as on a clean close; what
  // we still send is refused; the reason says it stopped, not that it vanished.
  lone_engine t;
  t.take();
  t.data(0, 3);
  t.imm(0xe0000002u);
  t.eng.on_disconnected("RDMA_CM_EVENT_DISCONNECTED");
  CHECK(t.eng.closed());
  CHECK_FALSE(t.eng.failed());
  CHECK(t.eng.reason() == "it stopped (shut its side down, then RDMA_CM_EVENT_DISCONNECTED)");
  unsigned char out[3];
  CHECK(t.eng.recv(out, 3).bytes == 3);
  CHECK(t.eng.recv(out, 3).st == status::eof);
  CHECK(t.eng.send(out, 1).st == status::closed);
}
