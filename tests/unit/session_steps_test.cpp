// Session setup without a channel (session_setup.hpp is sans-IO): two
// setups hand each other their output in random pieces, and each case
// plays one event the channel would bring.
#include <riomesh/actors/connection/session_setup.hpp>

#include <doctest/doctest.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace riomesh::actors;

namespace {

session_setup::options options(const std::string& name, bool dialer) {
  session_setup::options o;
  o.mine.name = name;
  o.mine.terms.arena_size = dialer ? 1 << 20 : 1 << 16;
  o.mine.terms.max_body = 1 << 16;
  o.mine.terms.max_buffers = 32;
  o.dialer = dialer;
  o.peer = dialer ? "10.0.0.2:7000" : "10.0.0.1:41000";
  return o;
}

session_setup make(const std::string& name, bool dialer, const std::string& secret = "k",
                   session_setup::options o = {}) {
  auto mine = options(name, dialer);
  mine.claim = std::move(o.claim);
  mine.mine.encrypt = o.mine.encrypt;
  mine.can_encrypt = o.can_encrypt;
  credentials c;
  c.secret = secret;
  return session_setup(std::make_shared<tls_context>(name, c), std::move(mine));
}

// One side's output as far as it goes, sent in one call.
std::vector<unsigned char> drain(session_setup& s) {
  auto [p, n] = s.output();
  std::vector<unsigned char> bytes(p, p + n);
  s.sent(n);
  return bytes;
}

struct pipe {
  std::vector<unsigned char> to_a, to_b;
};

// All of `in` offered at once; what was taken leaves it.
void feed(session_setup& s, std::vector<unsigned char>& in) {
  auto used = s.on_bytes(in.data(), in.size());
  in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(used));
}

// Until the dialer `a` has judged the acceptor's hello: its last message
// (a confirmation, or a refusal) then waits in its output, unsent.
void until_dialer_judged(session_setup& a, session_setup& b, pipe& p) {
  for (int i = 0; i < 100 && a.reading(); ++i) {
    auto out = drain(a);
    p.to_b.insert(p.to_b.end(), out.begin(), out.end());
    feed(b, p.to_b);
    out = drain(b);
    p.to_a.insert(p.to_a.end(), out.begin(), out.end());
    feed(a, p.to_a);
  }
}

// Both sides until neither moves: each one's output goes to the other in
// pieces of 1 to `most` bytes. Leaves in the pipe what was not taken.
void converse(session_setup& a, session_setup& b, pipe& p, std::uint64_t seed,
              std::size_t most = 4096) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 100000; ++round) {
    auto out = drain(a);
    p.to_b.insert(p.to_b.end(), out.begin(), out.end());
    out = drain(b);
    p.to_a.insert(p.to_a.end(), out.begin(), out.end());
    bool moved = false;
    for (auto [side, in] : {std::pair{&a, &p.to_a}, std::pair{&b, &p.to_b}}) {
      if (in->empty())
        continue;
      std::size_t n = std::min(in->size(), std::size_t{1} + rng() % most);
      auto used = side->on_bytes(in->data(), n);
      in->erase(in->begin(), in->begin() + static_cast<std::ptrdiff_t>(used));
      moved = moved || used > 0;
    }
    if (!moved && a.output().second == 0 && b.output().second == 0)
      return;
  }
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("session steps: two setups agree, whatever pieces the stream comes in") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    auto a = make("node-a", true);
    auto b = make("node-b", false);
    pipe p;
    converse(a, b, p, seed, seed <= 5 ? 1 : 2048);  // one byte at a time, then larger
    REQUIRE_MESSAGE(a.established(), a.reason());
    REQUIRE_MESSAGE(b.established(), b.reason());
    CHECK(a.authenticated());
    CHECK(a.peer_name() == "node-b");
    CHECK(b.peer_name() == "node-a");
    CHECK(a.peer_terms().arena_size == 1 << 16);
    CHECK(b.peer_terms().arena_size == 1 << 20);
    CHECK(p.to_a.empty());
    CHECK(p.to_b.empty());
    // The gate opens once, and nothing is encrypted or shut down.
    CHECK(a.take_authorize());
    CHECK_FALSE(a.take_authorize());
    CHECK(a.take_stream_tls() == nullptr);
    CHECK_FALSE(a.take_shutdown());
  }
}

TEST_CASE("session steps: the core's first bytes, right behind the setup, are left to it") {
  auto a = make("node-a", true);
  auto b = make("node-b", false);
  pipe p;
  // The dialer's stream starts right behind its confirmation.
  until_dialer_judged(a, b, p);
  REQUIRE_FALSE(a.failed());
  CHECK_FALSE(a.established());  // its confirmation is not out yet
  auto confirm = drain(a);
  REQUIRE_MESSAGE(a.established(), a.reason());
  p.to_b.insert(p.to_b.end(), confirm.begin(), confirm.end());
  const std::string core = "the core's envelope bytes";
  p.to_b.insert(p.to_b.end(), core.begin(), core.end());
  for (int i = 0; i < 100 && !b.established(); ++i) {
    auto used = b.on_bytes(p.to_b.data(), p.to_b.size());
    p.to_b.erase(p.to_b.begin(), p.to_b.begin() + static_cast<std::ptrdiff_t>(used));
    if (used == 0)
      break;
  }
  REQUIRE_MESSAGE(b.established(), b.reason());
  CHECK(std::string(p.to_b.begin(), p.to_b.end()) == core);
  CHECK(b.on_bytes(p.to_b.data(), p.to_b.size()) == 0);  // done: it takes no more
}

TEST_CASE("session steps: a refused claim fails both sides with its reason, the refusal first") {
  session_setup::options refusing;
  refusing.claim = [](const session_registry::claim& c) {
    CHECK(c.peer == "node-a");
    CHECK(c.dialed == false);
    return session_registry::answer{session_registry::verdict::refused, "this node is full"};
  };
  auto a = make("node-a", true);
  auto b = make("node-b", false, "k", refusing);
  pipe p;
  // By hand: the acceptor's refusal is out before it fails.
  for (int i = 0; i < 100 && !b.failed(); ++i) {
    auto out = drain(a);
    p.to_b.insert(p.to_b.end(), out.begin(), out.end());
    p.to_b.erase(p.to_b.begin(), p.to_b.begin() + static_cast<std::ptrdiff_t>(
                                                      b.on_bytes(p.to_b.data(), p.to_b.size())));
    if (b.output().second > 0 && !b.reading())
      break;  // refusing: its refusal waits to be sent
    auto back = drain(b);
    p.to_a.insert(p.to_a.end(), back.begin(), back.end());
    p.to_a.erase(p.to_a.begin(), p.to_a.begin() + static_cast<std::ptrdiff_t>(
                                                      a.on_bytes(p.to_a.data(), p.to_a.size())));
  }
  REQUIRE_FALSE(b.reading());
  CHECK_FALSE(b.failed());  // not before its refusal is sent
  CHECK_FALSE(b.take_shutdown());
  auto [bytes, n] = b.output();
  REQUIRE(n > 1);
  std::vector<unsigned char> refusal(bytes, bytes + n);
  b.sent(1);  // the channel took a byte of it only
  CHECK_FALSE(b.failed());
  b.sent(n - 1);
  REQUIRE(b.failed());
  CHECK(b.take_shutdown());
  CHECK_FALSE(b.take_shutdown());
  CHECK(b.reason() == "peer 10.0.0.1:41000 (node-a): this node is full");
  a.on_bytes(refusal.data(), refusal.size());
  REQUIRE(a.failed());
  // Dialed by address, and refused before its hello: it knows no name.
  CHECK(a.reason() == "peer 10.0.0.2:7000: the peer refused this session: this node is full");
  CHECK(a.take_shutdown());
}

TEST_CASE(
    "session steps: a wrong secret fails both sides, the TLS alert sent before the shutdown") {
  auto a = make("node-a", true, "right");
  auto b = make("node-b", false, "wrong");
  pipe p;
  bool alert_out = false;
  for (int i = 0; i < 100 && !(a.failed() && b.failed()); ++i) {
    for (auto [side, in, to] :
         {std::tuple{&a, &p.to_a, &p.to_b}, std::tuple{&b, &p.to_b, &p.to_a}}) {
      bool was = side->failed();
      feed(*side, *in);
      if (!was && side->failed())
        alert_out = alert_out || side->output().second > 0;
      auto out = drain(*side);
      to->insert(to->end(), out.begin(), out.end());
    }
  }
  CHECK(alert_out);  // the side that failed first had its alert to send
  REQUIRE(a.failed());
  REQUIRE(b.failed());
  CHECK(has(a.reason(), "wrong cluster secret"));
  CHECK(has(b.reason(), "wrong cluster secret"));
  CHECK(a.take_shutdown());
  CHECK(b.take_shutdown());
}

TEST_CASE("session steps: what is no TLS fails the setup at once, and asks for the shutdown") {
  auto b = make("node-b", false);
  const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  b.on_bytes(reinterpret_cast<const unsigned char*>(http.data()), http.size());
  REQUIRE(b.failed());
  CHECK(has(b.reason(), "peer 10.0.0.1:41000: not a riomesh node"));
  CHECK(b.take_shutdown());
  CHECK_FALSE(b.reading());
}

TEST_CASE("session steps: the stream's end or an early frame fails a setup under way only") {
  {
    auto a = make("node-a", true);
    a.on_end("connection reset by peer");
    REQUIRE(a.failed());
    CHECK(a.reason() ==
          "peer 10.0.0.2:7000: the peer ended the connection during setup: connection reset by "
          "peer");
    CHECK(a.take_shutdown());
  }
  {
    auto b = make("node-b", false);
    b.on_early_frame("");  // nothing held: nothing wrong
    CHECK_FALSE(b.failed());
    b.on_early_frame("a placement of 4096 bytes before the session");
    REQUIRE(b.failed());
    CHECK(has(b.reason(), "a placement of 4096 bytes before the session"));
  }
  auto a = make("node-a", true);
  auto b = make("node-b", false);
  pipe p;
  converse(a, b, p, 7);
  REQUIRE(a.established());
  a.on_end("closed");
  a.on_early_frame("a map");
  CHECK_FALSE(a.failed());  // the stream is the core's now: its events are the core's
}

TEST_CASE("session steps: encrypted, established only once the guard took the TLS session") {
  session_setup::options wants;
  wants.mine.encrypt = true;
  wants.can_encrypt = true;
  auto a = make("node-a", true, "k", wants);
  auto b = make("node-b", false, "k", wants);
  pipe p;
  until_dialer_judged(a, b, p);
  REQUIRE(a.output().second > 0);
  CHECK(a.take_stream_tls() == nullptr);  // its confirmation goes in the clear first
  converse(a, b, p, 3);
  CHECK(a.encrypted());
  CHECK(b.encrypted());
  CHECK_FALSE(a.established());  // the guard has not taken over yet
  auto* tls_a = a.take_stream_tls();
  auto* tls_b = b.take_stream_tls();
  REQUIRE(tls_a != nullptr);
  REQUIRE(tls_b != nullptr);
  CHECK(a.take_stream_tls() == nullptr);  // once
  a.secured(true, "");
  CHECK(a.established());
  b.secured(false, "no kTLS here");
  CHECK(b.failed());
  CHECK(has(b.reason(), "cannot encrypt the stream: no kTLS here"));
  SSL_free(tls_a);  // the guards would own them
  SSL_free(tls_b);
}

TEST_CASE("session steps: a side that cannot encrypt and a peer that insists part, saying why") {
  session_setup::options wants, cannot;
  wants.mine.encrypt = true;
  wants.can_encrypt = true;
  struct one {
    session_setup::options dialer, acceptor;
    const char* refuser_says;
    bool dialer_refuses;
  };
  for (const auto& c : {
           one{wants, cannot, "the dialer wants the stream encrypted, which this channel cannot do",
               false},
           one{cannot, wants,
               "the acceptor wants the stream encrypted, which this channel cannot do", true},
       }) {
    CAPTURE(c.refuser_says);
    auto a = make("node-a", true, "k", c.dialer);
    auto b = make("node-b", false, "k", c.acceptor);
    pipe p;
    converse(a, b, p, 4);
    REQUIRE(a.failed());
    REQUIRE(b.failed());
    CHECK(has((c.dialer_refuses ? a : b).reason(), c.refuser_says));
    CHECK(has((c.dialer_refuses ? b : a).reason(), "refused this session"));
  }
}

TEST_CASE("session steps: a send the channel refuses fails the setup, naming it") {
  auto a = make("node-a", true);
  REQUIRE(a.output().second > 0);  // its ClientHello
  a.sent(3);
  a.send_failed("closed");
  REQUIRE(a.failed());
  CHECK(has(a.reason(), "send: closed"));
  CHECK(a.output().second == 0);
  CHECK(a.take_shutdown());
}
