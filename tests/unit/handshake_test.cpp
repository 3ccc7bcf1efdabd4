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
