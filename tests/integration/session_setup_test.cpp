// Connection setup between two real channels (channel_pair.hpp): the handshake, the policy
// on unauthenticated peers, the terms, and the connection core taking the
// stream over where setup left it.
#include <riomesh/actors/connection/core_drive.hpp>
#include <riomesh/actors/connection/session_drive.hpp>
#include "channel_pair.hpp"

#include <doctest/doctest.h>

#include <chrono>

using namespace riomesh;
using namespace riomesh::actors;
using namespace riomesh::channels;

namespace {

session_terms terms(std::uint64_t arena) {
  session_terms t;
  t.arena_size = arena;
  t.max_body = 1u << 16;
  t.max_buffers = 32;
  return t;
}

std::shared_ptr<const tls_context> tls(const std::string& name, const std::string& secret) {
  credentials c;
  c.secret = secret;
  return std::make_shared<tls_context>(name, c);
}

// `a` dials, `b` accepts.
session_setup make(channel& ch, const std::string& name, const std::string& secret,
                   const session_terms& t, bool dialer, bool allow_unauthenticated = false,
                   std::string expected = "") {
  session_setup::options o;
  o.expected = std::move(expected);
  o.mine.name = name;
  o.mine.terms = t;
  o.dialer = dialer;
  o.allow_unauthenticated = allow_unauthenticated;
  return session_setup(tls(name, secret), over(ch, std::move(o)));
}

// Drives both until each is established or failed, or 10 s pass.
void setup(test::linked_channels& p, session_setup& a, session_setup& b) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto over = [](const session_setup& s) { return s.established() || s.failed(); };
  while (!(over(a) && over(b)) && std::chrono::steady_clock::now() < end) {
    p.a->progress();
    p.b->progress();
    drive_session(*p.a, a);
    drive_session(*p.b, b);
  }
}

}  // namespace

TEST_CASE("setup: the same secret, then the terms, then envelopes on the same stream") {
  test::linked_channels p;
  session_setup a = make(*p.a, "node-a", "k", terms(1 << 20), true);
  session_setup b = make(*p.b, "node-b", "k", terms(1 << 16), false);
  setup(p, a, b);
  REQUIRE_MESSAGE(a.established(), a.reason());
  REQUIRE_MESSAGE(b.established(), b.reason());
  CHECK(a.authenticated());
  CHECK(a.peer_name() == "node-b");
  CHECK(a.peer_terms().arena_size == 1 << 16);
  CHECK(b.peer_terms().arena_size == 1 << 20);
  CHECK(b.peer_terms().max_buffers == 32);

  // The cores take over where setup stopped.
  std::vector<unsigned char> arena_a(1 << 20), arena_b(1 << 16);
  connection_core::settings sa, sb;
  sa.inbound.arena_size = 1 << 20;
  sa.peer_arena_size = a.peer_terms().arena_size;
  sb.inbound.arena_size = 1 << 16;
  sb.peer_arena_size = b.peer_terms().arena_size;
  connection_core ca(*p.a, arena_a.data(), sa), cb(*p.b, arena_b.data(), sb);
  outbound_message m;
  m.env.body = {1, 2, 3};
  auto payload = buffer::copy_of("placed bytes", 12);
  m.placed = {payload};
  REQUIRE(ca.submit(std::move(m)) == connection_core::submit_status::queued);
  std::vector<inbound_message> got;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got.empty() && !ca.closed() && !cb.closed() && std::chrono::steady_clock::now() < end) {
    p.a->progress();
    p.b->progress();
    actors::drive_core(*p.a, ca);
    actors::drive_core(*p.b, cb);
    got = cb.take_inbound();
  }
  REQUIRE(got.size() == 1);
  CHECK(got[0].env.body == std::vector<unsigned char>{1, 2, 3});
  CHECK(std::string(reinterpret_cast<const char*>(got[0].placed[0].data()), 12) == "placed bytes");
}

TEST_CASE("setup: each side learns the other's identity: node id and where it listens") {
  test::linked_channels p;
  auto ta = terms(1 << 20), tb = terms(1 << 20);
  ta.identity.process_id = 4711;
  ta.identity.host_id.fill(0xab);
  ta.identity.listen_host = "10.1.2.3";
  ta.identity.listen_port = 7481;
  tb.identity.process_id = 42;
  tb.identity.host_id.fill(0xcd);
  tb.identity.listen_port = 7482;  // no host: the address its connection comes from
  session_setup a = make(*p.a, "node-a", "k", ta, true);
  session_setup b = make(*p.b, "node-b", "k", tb, false);
  setup(p, a, b);
  REQUIRE_MESSAGE(a.established(), a.reason());
  REQUIRE_MESSAGE(b.established(), b.reason());
  const auto& of_a = b.peer_terms().identity;
  CHECK(of_a.process_id == 4711);
  CHECK(of_a.host_id == ta.identity.host_id);
  CHECK(of_a.listen_host == "10.1.2.3");
  CHECK(of_a.listen_port == 7481);
  const auto& of_b = a.peer_terms().identity;
  CHECK(of_b.process_id == 42);
  CHECK(of_b.host_id == tb.identity.host_id);
  CHECK(of_b.listen_host.empty());
  CHECK(of_b.listen_port == 7482);
  // Terms without one still work: an identity is optional.
  test::linked_channels q;
  session_setup c = make(*q.a, "node-c", "k", terms(1 << 20), true);
  session_setup d = make(*q.b, "node-d", "k", tb, false);
  setup(q, c, d);
  REQUIRE_MESSAGE(d.established(), d.reason());
  CHECK_FALSE(d.peer_terms().identity.valid());
  CHECK(c.peer_terms().identity.process_id == 42);
}

TEST_CASE("setup: a wrong secret is refused on both sides, before any terms") {
  test::linked_channels p;
  session_setup a = make(*p.a, "node-a", "right", terms(1 << 20), true, false, "node-b");
  session_setup b = make(*p.b, "node-b", "wrong", terms(1 << 20), false);
  setup(p, a, b);
  CHECK(a.failed());
  CHECK(b.failed());
  CHECK(a.reason().find("(node-b): wrong cluster secret") != std::string::npos);
  CHECK(b.reason().find("(node-a): wrong cluster secret") != std::string::npos);
}

TEST_CASE("setup: without secrets, only a node that allows it accepts") {
  {
    test::linked_channels p;
    session_setup a = make(*p.a, "a", "", terms(4096), true, true);
    session_setup b = make(*p.b, "b", "", terms(4096), false, true);
    setup(p, a, b);
    CHECK(a.established());
    CHECK(b.established());
    CHECK_FALSE(a.authenticated());
  }
  {
    test::linked_channels p;
    session_setup a = make(*p.a, "a", "", terms(4096), true, true);
    session_setup b = make(*p.b, "b", "", terms(4096), false);
    setup(p, a, b);
    CHECK(b.failed());
    CHECK(b.reason().find("neither side proves itself") != std::string::npos);
    CHECK(a.failed());  // and the dialer is told why, under TLS
    CHECK(a.reason().find("refused this session: neither side proves itself") != std::string::npos);
  }
  {
    test::linked_channels p;
    session_setup a = make(*p.a, "a", "", terms(4096), true);
    session_setup b = make(*p.b, "b", "", terms(4096), false, true);
    setup(p, a, b);
    CHECK(a.failed());
    CHECK(b.failed());
    CHECK(b.reason().find("node 'a' refused this session: neither side proves itself") !=
          std::string::npos);
  }
}

TEST_CASE("setup: a node that reaches itself refuses its own name, on both ends") {
  test::linked_channels p;
  session_setup a = make(*p.a, "node-a", "0123456789abcdef", terms(4096), true);
  session_setup b = make(*p.b, "node-a", "0123456789abcdef", terms(4096), false);
  setup(p, a, b);
  CHECK(a.failed());
  CHECK(b.failed());
  CHECK(b.reason().find("the peer claims this node's own name ('node-a')") != std::string::npos);
  CHECK(a.reason().find("refused this session: the peer claims this node's own name") !=
        std::string::npos);
}
