// tcp streams encrypted after the handshake (channel.encrypt): through a
// relay that sees every byte the dialer sends, envelopes and placed
// buffers arrive intact while none of their bytes crosses in the clear,
// and a byte changed on the way ends the connection, naming the record.
#include <tcp_relay.hpp>

#include <riomesh/actors/connection/core_drive.hpp>
#include <riomesh/actors/connection/session_drive.hpp>
#include <riomesh/channels/tcp/tcp_channel.hpp>
#include <riomesh/channels/tcp/tcp_socket.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

using namespace riomesh;
using namespace riomesh::actors;
using namespace riomesh::channels;

namespace {

using clock_type = std::chrono::steady_clock;

struct relayed_pair {
  std::shared_ptr<channel> a, b;
  std::unique_ptr<test::tcp_relay> relay;
};

relayed_pair through_relay(std::optional<std::size_t> flip_at = std::nullopt) {
  auto l = tcp::listen_on({"127.0.0.1", 0});
  REQUIRE_MESSAGE(l.fd >= 0, l.error);
  relayed_pair p;
  p.relay = std::make_unique<test::tcp_relay>(
      config::endpoint{"127.0.0.1", static_cast<std::uint16_t>(tcp::local_port(l.fd))}, flip_at);
  std::string error;
  p.a = tcp::tcp_channel::connect(p.relay->at(), {}, {}, error);
  REQUIRE_MESSAGE(static_cast<bool>(p.a), error);
  pollfd pf{l.fd, POLLIN, 0};
  REQUIRE(::poll(&pf, 1, 5000) == 1);
  auto s = tcp::accept_from(l.fd, {});
  REQUIRE(s.fd >= 0);
  tcp::tcp_params gated;
  gated.gated = true;
  p.b = std::make_shared<tcp::tcp_channel>(s.fd, s.peer, gated);
  ::close(l.fd);
  return p;
}

session_setup make(channel& ch, const std::string& name, bool dialer, bool encrypt) {
  credentials c;
  c.secret = "0123456789abcdef";
  session_setup::options o;
  o.mine.name = name;
  o.mine.terms.arena_size = 8 << 20;
  o.mine.terms.max_body = 1 << 16;
  o.mine.terms.max_buffers = 32;
  o.mine.encrypt = encrypt;
  o.dialer = dialer;
  o.expected = dialer ? "node-b" : "";
  return session_setup(std::make_shared<tls_context>(name, c), over(ch, std::move(o)));
}

void set_up(relayed_pair& p, session_setup& a, session_setup& b) {
  auto end = clock_type::now() + std::chrono::seconds(10);
  auto over = [](const session_setup& s) { return s.established() || s.failed(); };
  while (!(over(a) && over(b)) && clock_type::now() < end) {
    p.a->progress();
    p.b->progress();
    drive_session(*p.a, a);
    drive_session(*p.b, b);
  }
  REQUIRE_MESSAGE(a.established(), a.reason());
  REQUIRE_MESSAGE(b.established(), b.reason());
}

buffer pattern(std::size_t n, const std::string& marker) {
  std::vector<unsigned char> bytes(n);
  for (std::size_t i = 0; i < n; ++i)
    bytes[i] = static_cast<unsigned char>(marker[i % marker.size()]);
  return buffer::copy_of(bytes.data(), bytes.size());
}

bool contains(const std::vector<unsigned char>& hay, const std::string& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

}  // namespace

TEST_CASE(
    "encryption: envelopes and placed buffers cross intact, none of their bytes in the clear") {
  for (bool dialer_asks : {true, false}) {
    CAPTURE(dialer_asks);
    auto p = through_relay();
    // Either side asking is enough.
    session_setup a = make(*p.a, "node-a", true, dialer_asks);
    session_setup b = make(*p.b, "node-b", false, !dialer_asks);
    set_up(p, a, b);
    CHECK(a.encrypted());
    CHECK(b.encrypted());
    CHECK(p.a->guard()->encrypted());
    CHECK(p.b->guard()->encrypted());
    // Room for all three at once: the views received hold their space.
    std::vector<unsigned char> arena_a(8 << 20), arena_b(8 << 20);
    connection_core::settings sa, sb;
    sa.inbound.arena_size = sb.inbound.arena_size = 8 << 20;
    sa.peer_arena_size = sb.peer_arena_size = 8 << 20;
    connection_core ca(*p.a, arena_a.data(), sa), cb(*p.b, arena_b.data(), sb);
    const std::string secret_words = "needle-in-the-clear?";
    auto big = pattern(3 << 20, secret_words), small = pattern(100, secret_words);
    for (int i = 0; i < 3; ++i) {
      outbound_message m;
      m.env.body.assign(secret_words.begin(), secret_words.end());
      m.placed = {i == 1 ? small : big};
      REQUIRE(ca.submit(std::move(m)) == connection_core::submit_status::queued);
    }
    std::vector<inbound_message> got;
    auto end = clock_type::now() + std::chrono::seconds(20);
    while (got.size() < 3 && !ca.closed() && !cb.closed() && clock_type::now() < end) {
      p.a->progress();
      p.b->progress();
      actors::drive_core(*p.a, ca);
      actors::drive_core(*p.b, cb);
      for (auto& m : cb.take_inbound())
        got.push_back(std::move(m));
    }
    REQUIRE_MESSAGE(got.size() == 3, cb.reason(), " / ", ca.reason());
    for (int i = 0; i < 3; ++i) {
      auto& expected = i == 1 ? small : big;
      CHECK(std::string(got[i].env.body.begin(), got[i].env.body.end()) == secret_words);
      REQUIRE(got[i].placed.size() == 1);
      REQUIRE(got[i].placed[0].size() == expected.size());
      CHECK(
          std::equal(expected.data(), expected.data() + expected.size(), got[i].placed[0].data()));
    }
    auto wire = p.relay->seen();
    CHECK(wire.size() > (6u << 20));
    CHECK_FALSE(contains(wire, secret_words));
    CHECK_FALSE(contains(wire, secret_words.substr(0, 8)));
  }
}

TEST_CASE("encryption: neither side asking leaves the stream in the clear after the handshake") {
  auto p = through_relay();
  session_setup a = make(*p.a, "node-a", true, false);
  session_setup b = make(*p.b, "node-b", false, false);
  set_up(p, a, b);
  CHECK_FALSE(a.encrypted());
  CHECK_FALSE(p.b->guard()->encrypted());
  std::vector<unsigned char> arena_a(1 << 20), arena_b(1 << 20);
  connection_core::settings s;
  s.inbound.arena_size = s.peer_arena_size = 1 << 20;
  connection_core ca(*p.a, arena_a.data(), s), cb(*p.b, arena_b.data(), s);
  const std::string words = "plainly-visible-words";
  outbound_message m;
  m.env.body.assign(words.begin(), words.end());
  REQUIRE(ca.submit(std::move(m)) == connection_core::submit_status::queued);
  std::vector<inbound_message> got;
  for (auto end = clock_type::now() + std::chrono::seconds(10);
       got.empty() && clock_type::now() < end;) {
    p.a->progress();
    p.b->progress();
    actors::drive_core(*p.a, ca);
    actors::drive_core(*p.b, cb);
    got = cb.take_inbound();
  }
  REQUIRE(got.size() == 1);
  CHECK(contains(p.relay->seen(), words));
}

TEST_CASE("encryption: a byte changed on the way ends the connection, saying the record is bad") {
  // Past the handshake (a few KiB): inside the first placed buffer's records.
  auto p = through_relay(std::size_t{200000});
  session_setup a = make(*p.a, "node-a", true, true);
  session_setup b = make(*p.b, "node-b", false, true);
  set_up(p, a, b);
  std::vector<unsigned char> arena_a(4 << 20), arena_b(4 << 20);
  connection_core::settings s;
  s.inbound.arena_size = s.peer_arena_size = 4 << 20;
  connection_core ca(*p.a, arena_a.data(), s), cb(*p.b, arena_b.data(), s);
  outbound_message m;
  m.env.body = {1, 2, 3};
  m.placed = {pattern(1 << 20, "x")};
  REQUIRE(ca.submit(std::move(m)) == connection_core::submit_status::queued);
  std::vector<inbound_message> got;
  for (auto end = clock_type::now() + std::chrono::seconds(10);
       !cb.closed() && clock_type::now() < end;) {
    p.a->progress();
    p.b->progress();
    actors::drive_core(*p.a, ca);
    actors::drive_core(*p.b, cb);
    for (auto& x : cb.take_inbound())
      got.push_back(std::move(x));
  }
  CHECK(got.empty());  // the envelope behind the changed bytes never came
  REQUIRE(cb.closed());
  CHECK_MESSAGE(cb.reason().find("does not decrypt") != std::string::npos, cb.reason());
}
