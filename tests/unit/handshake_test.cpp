#include <riomesh/actors/handshake/handshake.hpp>

#include <doctest/doctest.h>

#include <random>

using namespace riomesh::actors;
using state = handshake::state;

namespace {

nonce fixed(unsigned char seed) {
  nonce n{};
  for (std::size_t i = 0; i < n.size(); ++i)
    n[i] = static_cast<unsigned char>(seed + i * 7);
  return n;
}

// Runs two sides against each other, handing bytes over in random pieces.
void converse(handshake& a, handshake& b, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> to_a, to_b;
  for (int round = 0; round < 1000 && !(a.done() && b.done()); ++round) {
    auto out = a.take_output();
    to_b.insert(to_b.end(), out.begin(), out.end());
    out = b.take_output();
    to_a.insert(to_a.end(), out.begin(), out.end());
    for (auto [side, queue] : {std::pair{&a, &to_a}, std::pair{&b, &to_b}}) {
      if (queue->empty() || side->done())
        continue;
      std::size_t n = 1 + rng() % queue->size();
      std::size_t used = side->feed(queue->data(), n);
      queue->erase(queue->begin(), queue->begin() + static_cast<std::ptrdiff_t>(used));
    }
  }
}

}  // namespace

TEST_CASE("handshake: the same secret authenticates both sides, whatever the pieces") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    handshake a("broker", "s3cret", fixed(1)), b("subscriber-1", "s3cret", fixed(2));
    converse(a, b, seed);
    CHECK(a.current() == state::authenticated);
    CHECK(b.current() == state::authenticated);
    CHECK(a.peer_name() == "subscriber-1");
    CHECK(b.peer_name() == "broker");
  }
}

TEST_CASE("handshake: a wrong secret is refused by both sides, with the reason") {
  handshake a("a", "right", fixed(1)), b("b", "wrong", fixed(2));
  converse(a, b);
  CHECK(a.current() == state::refused);
  CHECK(b.current() == state::refused);
  CHECK(a.reason() == "wrong cluster secret (the peer's proof does not match)");
  CHECK(b.reason() == a.reason());
}

TEST_CASE("handshake: a secret on one side only is refused by both") {
  handshake a("a", "s", fixed(1)), b("b", "", fixed(2));
  converse(a, b);
  CHECK(a.reason() == "the peer has no cluster secret and this node requires one");
  CHECK(b.reason() == "the peer requires a cluster secret and this node has none");
}

TEST_CASE("handshake: no secret on either side is unauthenticated, for the acceptor to judge") {
  handshake a("a", "", fixed(1)), b("b", "", fixed(2));
  converse(a, b);
  CHECK(a.current() == state::unauthenticated);
  CHECK(b.current() == state::unauthenticated);
}

TEST_CASE("handshake: our own messages reflected back are refused") {
  handshake a("a", "s", fixed(1));
  auto hello = a.take_output();
  a.feed(hello.data(), hello.size());
  CHECK(a.current() == state::refused);
  CHECK(a.reason().find("echoed our nonce") != std::string::npos);
}

TEST_CASE("handshake: a proof recorded from another connection does not replay") {
  // An eavesdropper recorded b's HELLO and PROOF for a's nonce 1...
  handshake a1("a", "s", fixed(1)), b("b", "s", fixed(2));
  auto hello_a1 = a1.take_output();
  auto from_b = b.take_output();
  b.feed(hello_a1.data(), hello_a1.size());
  auto proof_b = b.take_output();
  from_b.insert(from_b.end(), proof_b.begin(), proof_b.end());
  // ...and plays them to a on a new connection, where a's nonce is fresh.
  handshake a2("a", "s", fixed(9));
  a2.feed(from_b.data(), from_b.size());
  CHECK(a2.current() == state::refused);
  CHECK(a2.reason() == "wrong cluster secret (the peer's proof does not match)");
}

TEST_CASE("handshake: a stranger is refused, bytes after the end are left alone") {
  handshake a("a", "s", fixed(1));
  std::vector<unsigned char> junk(64, 'x');
  a.feed(junk.data(), junk.size());
  CHECK(a.reason() == "not a riomesh node (no handshake greeting)");

  handshake c("c", "", fixed(3)), d("d", "", fixed(4));
  auto hello = d.take_output();
  hello.push_back(0xee);  // the first byte of what follows the handshake
  CHECK(c.feed(hello.data(), hello.size()) == hello.size() - 1);
  CHECK(c.current() == state::unauthenticated);
}

TEST_CASE("handshake: random nonces differ") {
  CHECK(random_nonce() != random_nonce());
}

namespace {

// Two nodes with keys, each listing the other's public key.
struct keyed {
  node_key a = node_key::generate(), b = node_key::generate();
  credentials of_a(std::string secret = "") const {
    return {std::move(secret), a, {{"b", b.public_part()}}};
  }
  credentials of_b(std::string secret = "") const {
    return {std::move(secret), b, {{"a", a.public_part()}}};
  }
};

}  // namespace

TEST_CASE("handshake: node keys prove each side's name, whatever the pieces") {
  keyed k;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    handshake a("a", k.of_a(), fixed(1)), b("b", k.of_b(), fixed(2));
    converse(a, b, seed);
    CHECK(a.current() == state::authenticated);
    CHECK(b.current() == state::authenticated);
    CHECK(a.name_proven());
    CHECK(b.name_proven());
  }
  // With the secret too, both proofs are checked.
  handshake a("a", k.of_a("shared"), fixed(1)), b("b", k.of_b("other"), fixed(2));
  converse(a, b);
  CHECK(a.reason() == "wrong cluster secret (the peer's proof does not match)");
}

TEST_CASE("handshake: a member claiming another node's name without its key is refused") {
  keyed k;
  // "b" is an impostor: it knows the secret but signs with a key of its own.
  auto impostor = k.of_b("shared");
  impostor.key = node_key::generate();
  handshake a("a", k.of_a("shared"), fixed(1)), b("b", impostor, fixed(2));
  converse(a, b);
  CHECK(a.current() == state::refused);
  CHECK(a.reason() ==
        "node 'b': its signature does not match its key in this node's keyring (an impostor, "
        "or a wrong key)");
  // A name the keyring does not list.
  handshake c("a", k.of_a(), fixed(1)), d("d", credentials{"", node_key::generate(), {}}, fixed(3));
  converse(c, d);
  CHECK(c.reason() ==
        "no key for node 'd' in this node's keyring, and no cluster secret to accept it by");
  // With a secret, an unlisted name gets in by it, its name not proven.
  handshake e("a", k.of_a("shared"), fixed(1)), f("cli", "shared", fixed(3));
  converse(e, f);
  CHECK(e.current() == state::authenticated);
  CHECK_FALSE(e.name_proven());
}

TEST_CASE("handshake: a name in the keyring without a signature is refused") {
  keyed k;
  handshake a("a", k.of_a("shared"), fixed(1)), b("b", "shared", fixed(2));
  converse(a, b);
  CHECK(a.reason() ==
        "node 'b' is in this node's keyring but does not sign its handshake (node.key_file)");
}

TEST_CASE("handshake: a signature nobody asked for is read and not judged") {
  keyed k;
  // b signs, a keeps no keyring: the secret authenticates, the name is not proven.
  handshake a("a", "shared", fixed(1)), b("b", credentials{"shared", k.b, {}}, fixed(2));
  converse(a, b);
  CHECK(a.current() == state::authenticated);
  CHECK(b.current() == state::authenticated);
  CHECK_FALSE(a.name_proven());
  // Neither a secret nor a keyring: unauthenticated, for the acceptor to judge.
  handshake c("c", credentials{"", k.a, {}}, fixed(1)), d("d", "", fixed(2));
  converse(c, d);
  CHECK(c.current() == state::unauthenticated);
  CHECK(d.current() == state::unauthenticated);
}

TEST_CASE("handshake: peer names are checked, and never echoed raw") {
  handshake a("a", "", fixed(1));
  std::vector<unsigned char> hello = {'R', 'M', 'H', 'S', 2, 0, 9, 0};
  for (int i = 0; i < 32; ++i)
    hello.push_back(static_cast<unsigned char>(i + 100));
  for (char c : std::string("ev\nil\x1b[2J"))
    hello.push_back(static_cast<unsigned char>(c));
  a.feed(hello.data(), hello.size());
  CHECK(a.reason() ==
        "node name 'ev\\x0ail\\x1b[2J' is not valid: 1 to 64 letters, digits, '-', '_' or '.', "
        "starting with a letter or digit");
}
