// The TLS 1.3 handshake without a network: two sides hand each other their
// bytes in random pieces, then judge each other by the trust rules.
#include <riomesh/actors/connection/session_hello.hpp>
#include <riomesh/actors/handshake/handshake.hpp>
#include <riomesh/actors/handshake/trust_rules.hpp>

#include <doctest/doctest.h>

#include <random>

using namespace riomesh::actors;
using state = handshake::state;
using proof = handshake::proof;

namespace {

std::shared_ptr<const tls_context> node(const std::string& name, credentials c = {}) {
  return std::make_shared<tls_context>(name, std::move(c));
}

credentials secret(std::string s) {
  credentials c;
  c.secret = std::move(s);
  return c;
}

// Runs both sides until neither moves, handing bytes over in random
// pieces; each side's messages are handed on as they are sealed.
void converse(handshake& a, handshake& b, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> to_a, to_b;
  for (int round = 0; round < 2000; ++round) {
    auto out = a.take_output();
    to_b.insert(to_b.end(), out.begin(), out.end());
    out = b.take_output();
    to_a.insert(to_a.end(), out.begin(), out.end());
    if (to_a.empty() && to_b.empty())
      return;
    for (auto [side, queue] : {std::pair{&a, &to_a}, std::pair{&b, &to_b}}) {
      if (queue->empty())
        continue;
      std::size_t n = 1 + rng() % queue->size();
      std::size_t used = side->feed(queue->data(), n);
      queue->erase(queue->begin(), queue->begin() + static_cast<std::ptrdiff_t>(used));
      while (side->receive()) {
      }
      if (side->current() == state::failed)
        queue->clear();
    }
  }
}

// Two nodes with keys, each listing the other's public key.
struct keyed {
  node_key a = node_key::generate(), b = node_key::generate();
  credentials of_a(std::string s = "") const {
    credentials c;
    c.secret = std::move(s);
    c.key = a;
    c.trusted = {{"b", b.public_part()}};
    return c;
  }
  credentials of_b(std::string s = "") const {
    credentials c;
    c.secret = std::move(s);
    c.key = b;
    c.trusted = {{"a", a.public_part()}};
    return c;
  }
};

}  // namespace

TEST_CASE("handshake: the same secret secures both sides, bound to both names, in any pieces") {
  auto ta = node("broker", secret("s3cret-s3cret-s3")),
       tb = node("sub-1", secret("s3cret-s3cret-s3"));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    handshake a(ta, true, "sub-1"), b(tb, false);
    converse(a, b, seed);
    REQUIRE(a.current() == state::secured);
    REQUIRE(b.current() == state::secured);
    CHECK(a.peer_proof() == proof::secret);
    CHECK(b.peer_proof() == proof::secret);
    CHECK(a.proven_name() == "sub-1");   // the node it dialed, bound into the PSK
    CHECK(b.proven_name() == "broker");  // the dialer's name in its PSK
  }
}

TEST_CASE("handshake: messages under TLS arrive whole, and what follows stays unread") {
  auto ta = node("a", secret("0123456789abcdef")), tb = node("b", secret("0123456789abcdef"));
  handshake a(ta, true, "b"), b(tb, false);
  converse(a, b);
  REQUIRE(b.current() == state::secured);
  std::vector<unsigned char> m(3000);
  for (std::size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<unsigned char>(i * 13);
  a.send(m);
  a.send({1, 2, 3});
  auto bytes = a.take_output();
  bytes.push_back(0xee);  // the first byte of the stream in the clear
  std::size_t used = 0;
  std::vector<std::vector<unsigned char>> got;
  while (used < bytes.size() && got.size() < 2) {
    std::size_t n = b.feed(bytes.data() + used, bytes.size() - used);
    if (n == 0 && !b.receive())
      break;
    used += n;
    while (auto r = b.receive())
      got.push_back(*r);
  }
  REQUIRE(got.size() == 2);
  CHECK(got[0] == m);
  CHECK(got[1] == std::vector<unsigned char>{1, 2, 3});
  CHECK(used == bytes.size() - 1);  // it stopped at the last record
}

TEST_CASE("handshake: a wrong secret fails both sides, saying so") {
  handshake a(node("a", secret("right-right-right")), true, "b"),
      b(node("b", secret("wrong-wrong-wrong")), false);
  converse(a, b);
  CHECK(a.current() == state::failed);
  CHECK(b.current() == state::failed);
  CHECK(b.reason().find("wrong cluster secret") != std::string::npos);
  CHECK(a.reason().find("wrong cluster secret") != std::string::npos);
}

TEST_CASE("handshake: node keys prove each side's name, whatever the pieces") {
  keyed k;
  auto ta = node("a", k.of_a()), tb = node("b", k.of_b());
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    handshake a(ta, true, "b"), b(tb, false);
    converse(a, b, seed);
    REQUIRE(a.current() == state::secured);
    REQUIRE(b.current() == state::secured);
    CHECK(a.peer_proof() == proof::key);
    CHECK(b.peer_proof() == proof::key);
    CHECK(a.proven_name() == "b");
    CHECK(b.proven_name() == "a");
  }
  // With the secret too, a listed peer still proves itself by its key.
  handshake a(node("a", k.of_a("shared-shared-sh")), true, "b"),
      b(node("b", k.of_b("shared-shared-sh")), false);
  converse(a, b);
  CHECK(a.peer_proof() == proof::key);
  CHECK(b.peer_proof() == proof::key);
}

TEST_CASE("handshake: a key nobody lists proves nothing, and no credentials prove nothing") {
  keyed k;
  auto impostor = k.of_b();
  impostor.key = node_key::generate();
  handshake a(node("a", k.of_a()), false), b(node("b", impostor), true, "a");
  converse(a, b);
  REQUIRE(a.current() == state::secured);
  CHECK(a.peer_proof() == proof::none);
  CHECK(b.peer_proof() == proof::key);  // a's key is listed in b's keyring
  handshake c(node("c"), true), d(node("d"), false);
  converse(c, d);
  CHECK(c.peer_proof() == proof::none);
  CHECK(d.peer_proof() == proof::none);
}

TEST_CASE("handshake: a PSK meant for another node is declined, and the acceptor says why") {
  // A relay: a dialer's proof for node "c" handed to node "b".
  handshake a(node("a", secret("0123456789abcdef")), true, "c"),
      b(node("b", secret("0123456789abcdef")), false);
  converse(a, b);
  REQUIRE(b.current() == state::secured);
  CHECK(b.peer_proof() == proof::none);
  CHECK(b.psk_declined() == "the dialer meant node 'c'");
}

TEST_CASE("handshake: after a PSK handshake the acceptor asks for the dialer's key") {
  keyed k;
  auto dialer = k.of_a("0123456789abcdef");
  dialer.trusted.clear();  // a lists nobody: the secret proves b to it
  handshake a(node("a", dialer), true, "b"), b(node("b", k.of_b("0123456789abcdef")), false);
  converse(a, b);
  REQUIRE(b.current() == state::secured);
  CHECK(b.peer_proof() == proof::secret);
  b.request_certificate();
  CHECK(b.certificate_pending());
  converse(a, b);
  CHECK_FALSE(b.certificate_pending());
  CHECK(b.peer_proof() == proof::key);
  CHECK(b.proven_name() == "a");
  CHECK(a.peer_proof() == proof::secret);
  // An impostor with the secret and a key of its own proves the secret only.
  auto impostor = dialer;
  impostor.key = node_key::generate();
  handshake c(node("a", impostor), true, "b"), d(node("b", k.of_b("0123456789abcdef")), false);
  converse(c, d);
  d.request_certificate();
  converse(c, d);
  CHECK_FALSE(d.certificate_pending());
  CHECK(d.peer_proof() == proof::secret);
}

TEST_CASE("handshake: bytes that are no TLS record end it at once") {
  handshake a(node("a"), false);
  std::vector<unsigned char> junk = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P'};
  a.feed(junk.data(), junk.size());
  CHECK(a.current() == state::failed);
  CHECK(a.reason() == "not a riomesh node: what it sent first is no TLS record");
  // A record longer than TLS allows, after a good start.
  handshake b(node("b"), false), c(node("c"), true);
  auto hello = c.take_output();
  b.feed(hello.data(), hello.size());
  std::vector<unsigned char> huge = {22, 3, 3, 0xff, 0xff};
  b.feed(huge.data(), huge.size());
  CHECK(b.current() == state::failed);
  CHECK(b.reason().find("malformed TLS record") != std::string::npos);
}

TEST_CASE("handshake: PSKs are bound to the ordered pair of names") {
  auto k1 = psk_of("secret-secret-se", psk_identity("a", "b"));
  CHECK(k1 == psk_of("secret-secret-se", psk_identity("a", "b")));
  CHECK(k1 != psk_of("secret-secret-se", psk_identity("b", "a")));
  CHECK(k1 != psk_of("secret-secret-sf", psk_identity("a", "b")));
  CHECK(psk_identity("a", "") == "riomesh/3 a *");
}

// ---- trust rules --------------------------------------------------------------------

namespace {

peer_claim claim(proof p, std::string proven, std::string claimed, const credentials& c,
                 bool dialed = false, std::string expected = "") {
  peer_claim x;
  x.we_dialed = dialed;
  x.our_name = "me";
  x.expected = std::move(expected);
  x.proof = p;
  x.proven = std::move(proven);
  x.claimed = std::move(claimed);
  x.creds = &c;
  return x;
}

}  // namespace

TEST_CASE("trust: nobody may take this node's own name, or another's proven one") {
  keyed k;
  auto c = k.of_a("0123456789abcdef");
  CHECK(judge(claim(proof::secret, "me", "me", c)).why ==
        "the peer claims this node's own name ('me')");
  CHECK(judge(claim(proof::key, "b", "me", c)).why.find("own name") != std::string::npos);
  // A key proves the name the keyring lists for it, no other.
  CHECK(judge(claim(proof::key, "b", "x", c)).why.find("its key is node 'b''s") !=
        std::string::npos);
  auto v = judge(claim(proof::key, "b", "b", c));
  CHECK(v.ok);
  CHECK(v.authenticated);
  CHECK_FALSE(v.admin);
  c.admins = {"b"};
  CHECK(judge(claim(proof::key, "b", "b", c)).admin);
}

TEST_CASE("trust: the secret proves members, not the names the keyring lists") {
  keyed k;
  auto c = k.of_a("0123456789abcdef");
  auto listed = judge(claim(proof::secret, "b", "b", c));
  CHECK_FALSE(listed.ok);
  CHECK(listed.why.find("proves its name with its key") != std::string::npos);
  CHECK(judge(claim(proof::secret, "cli", "cli", c)).ok);
  // The name bound into its PSK is the one it must claim.
  CHECK(judge(claim(proof::secret, "cli", "other", c)).why.find("bound to the name 'cli'") !=
        std::string::npos);
  // A dialer finding another node than the one it dialed says so, as an
  // answer that stays (the refusal's own kind on the wire).
  auto other = judge(claim(proof::secret, "x", "y", c, true, "x"));
  CHECK(other.why == "expected node 'x', found node 'y'");
  CHECK(other.wrong_node);
  CHECK_FALSE(judge(claim(proof::secret, "cli", "other", c)).wrong_node);
}

TEST_CASE("session messages: a refusal says whether the dialer met another node") {
  auto plain = decode_session_message(encode_refusal("busy"));
  CHECK(plain.what == session_message::kind::refusal);
  CHECK(plain.text == "busy");
  CHECK_FALSE(plain.wrong_node);
  auto other = decode_session_message(encode_refusal("this is node 'b'", true));
  CHECK(other.what == session_message::kind::refusal);
  CHECK(other.text == "this is node 'b'");
  CHECK(other.wrong_node);
}

TEST_CASE("session messages: a hello says whether its node fetches lent buffers") {
  for (bool fetches : {false, true}) {
    CAPTURE(fetches);
    session_hello h;
    h.name = "node-a";
    h.terms.arena_size = 1 << 20;
    h.terms.fetches_lent = fetches;
    auto bytes = encode_hello(h);
    auto back = decode_session_message(bytes);
    REQUIRE(back.what == session_message::kind::hello);
    CHECK(back.hello.terms.fetches_lent == fetches);
    bytes[1] |= 8;  // a flag nobody defined
    CHECK(decode_session_message(bytes).text.find("unknown hello flags") != std::string::npos);
  }
}

TEST_CASE("trust: no proof is refused where anything is required, and named") {
  keyed k;
  auto keys_only = k.of_a();
  CHECK(
      judge(claim(proof::none, "", "b", keys_only)).why.find("did not prove itself with the key") !=
      std::string::npos);
  CHECK(judge(claim(proof::none, "", "d", keys_only)).why ==
        "no key for node 'd' in this node's keyring, and no cluster secret to accept it by");
  auto with_secret = secret("0123456789abcdef");
  auto c = claim(proof::none, "", "d", with_secret);
  c.psk_declined = "the dialer meant node 'c'";
  CHECK(judge(c).why == "the peer did not prove the cluster secret: the dialer meant node 'c'");
  credentials nothing;
  auto open = claim(proof::none, "", "d", nothing);
  CHECK(judge(open).why.find("only accepts that on loopback") != std::string::npos);
  open.allow_unauthenticated = true;
  auto v = judge(open);
  CHECK(v.ok);
  CHECK_FALSE(v.authenticated);
}
