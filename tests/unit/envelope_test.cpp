#include <riomesh/actors/envelope/envelope_decoder.hpp>

#include <doctest/doctest.h>

#include <algorithm>

#include <random>

using namespace riomesh::actors;

namespace {

envelope_limits limits(std::uint64_t arena = 1 << 20) {
  envelope_limits l;
  l.arena_size = arena;
  l.max_body = 4096;
  l.max_buffers = 8;
  return l;
}

envelope sample() {
  envelope e;
  e.kind = envelope_kind::request;
  e.sender = 0x1122334455667788ull;
  e.receiver = 42;
  e.request_id = 7;
  e.buffers = {{0, 4096}, {65536, 1000}};
  e.body = {1, 2, 3, 4, 5};
  return e;
}

// Decodes `bytes` fed in one piece; the decoder's error, or empty.
std::string decode_error(const std::vector<unsigned char>& bytes, const envelope_limits& l) {
  envelope_decoder d(l);
  d.feed(bytes.data(), bytes.size());
  CHECK_FALSE(d.next());  // nothing of a bad envelope is delivered
  return d.error();
}

void poke32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}
void poke64(std::vector<unsigned char>& b, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace

TEST_CASE("envelope: the layout is 40 header bytes, 16 per buffer, then the body") {
  std::vector<unsigned char> b;
  encode(sample(), b);
  CHECK(b.size() == 40 + 2 * 16 + 5);
  CHECK(b.size() == encoded_size(sample()));
  CHECK(b[0] == 'R');
  CHECK(b[3] == 'V');
  CHECK(b[5] == 2);  // request
  CHECK(b[6] == 2);  // two buffers
  CHECK(b[8] == 0x88);
}

TEST_CASE("envelope: random envelopes survive any split of the stream") {
  std::mt19937_64 rng(3);
  std::vector<envelope> sent;
  std::vector<unsigned char> stream;
  for (int i = 0; i < 300; ++i) {
    envelope e;
    e.kind = static_cast<envelope_kind>(1 + rng() % 4);
    e.sender = rng();
    e.receiver = rng();
    e.request_id = rng();
    // Up to 8 buffers, each in its own 64 KiB of the 1 MiB arena: the
    // buffers of one envelope never overlap.
    std::vector<std::uint64_t> slots(16);
    for (std::size_t k = 0; k < slots.size(); ++k)
      slots[k] = k;
    std::shuffle(slots.begin(), slots.end(), rng);
    for (auto n = rng() % 9; n > 0; --n) {
      std::uint64_t off = slots[n] * 65536 + 64 * (rng() % 256);
      e.buffers.push_back({off, 1 + rng() % 49152});
    }
    e.body.resize(rng() % 4097);
    for (auto& c : e.body)
      c = static_cast<unsigned char>(rng());
    encode(e, stream);
    sent.push_back(std::move(e));
  }
  envelope_decoder d(limits());
  std::size_t at = 0, got = 0;
  while (at < stream.size()) {
    std::size_t piece = std::min<std::size_t>(stream.size() - at, 1 + rng() % 100);
    std::size_t used = 0;
    while (used < piece) {
      used += d.feed(stream.data() + at + used, piece - used);
      REQUIRE_FALSE(d.failed());
      while (auto e = d.next()) {
        REQUIRE(got < sent.size());
        const auto& want = sent[got++];
        CHECK(e->kind == want.kind);
        CHECK(e->sender == want.sender);
        CHECK(e->receiver == want.receiver);
        CHECK(e->request_id == want.request_id);
        CHECK(e->buffers == want.buffers);
        CHECK(e->body == want.body);
      }
    }
    at += piece;
  }
  CHECK(got == sent.size());
  CHECK(d.decoded() == sent.size());
  CHECK_FALSE(d.partial());
}

TEST_CASE("envelope: a lying peer is refused with the envelope and the reason") {
  std::vector<unsigned char> good;
  encode(sample(), good);
  auto l = limits();

  auto bad = good;
  bad[0] = 'X';
  CHECK(decode_error(bad, l) ==
        "envelope 1: bad magic (not a riomesh envelope, or the stream "
        "lost its place)");
  bad = good;
  bad[4] = 9;
  CHECK(decode_error(bad, l) == "envelope 1: version 9, this node speaks 1");
  bad = good;
  bad[5] = 77;
  CHECK(decode_error(bad, l) == "envelope 1: unknown kind 77");
  bad = good;  // the directory's lookups never carry buffers
  bad[5] = static_cast<unsigned char>(envelope_kind::resolve);
  CHECK(decode_error(bad, l) == "envelope 1: a resolve carries no buffers");
  bad = good;  // the sample has two buffers
  bad[5] = static_cast<unsigned char>(envelope_kind::piece);
  CHECK(decode_error(bad, l) == "envelope 1: a piece carries one buffer and a 12-byte body");
  bad = good;  // a farewell is the bare header
  bad[5] = static_cast<unsigned char>(envelope_kind::farewell);
  CHECK(decode_error(bad, l) == "envelope 1: a farewell carries no buffers and no body");
  bad = good;
  bad[6] = 200;
  CHECK(decode_error(bad, l) == "envelope 1: 200 buffers, more than the 8 allowed");
  bad = good;
  poke32(bad, 32, 1u << 30);
  CHECK(decode_error(bad, l) == "envelope 1: body of 1073741824 bytes, more than the 4096 allowed");
  bad = good;
  poke32(bad, 36, 4);
  CHECK(decode_error(bad, l) == "envelope 1: unknown flags 4");
  bad = good;  // lent buffers to a node that did not offer to fetch them
  poke32(bad, 36, 2);
  CHECK(decode_error(bad, l) == "envelope 1: lent buffers, which this node did not offer to fetch");
  bad = good;  // a placed body with an inline one too
  poke32(bad, 36, 1);
  CHECK(decode_error(bad, l) ==
        "envelope 1: a request with a placed body needs one buffer for it and no inline body");
  bad = good;
  poke64(bad, 40 + 16 + 0, (1 << 20) - 10);  // second buffer runs past the arena
  CHECK(decode_error(bad, l) ==
        "envelope 1: buffer 1 (offset 1048566, length 1000): outside the arena of 1048576 bytes");
  bad = good;
  poke64(bad, 40, ~0ull - 100);  // offset + length would wrap
  poke64(bad, 48, 4096);
  CHECK(decode_error(bad, l).find("buffer 0 (offset 18446744073709551515, length 4096): outside") !=
        std::string::npos);
  bad = good;
  poke64(bad, 48, 0);
  CHECK(decode_error(bad, l) == "envelope 1: buffer 0 (offset 0, length 0): empty");
  bad = good;  // the second buffer starts inside the first one's granules
  poke64(bad, 40, 4096);
  poke64(bad, 48, 100);
  poke64(bad, 56, 4096 + 64);
  poke64(bad, 64, 10);
  CHECK(decode_error(bad, l) ==
        "envelope 1: buffers 0 (offset 4096, length 100) and 1 (offset "
        "4160, length 10) overlap");
  poke64(bad, 56, 4096 + 128);  // the next granule: fine
  {
    envelope_decoder d(l);
    d.feed(bad.data(), bad.size());
    CHECK_FALSE(d.failed());
    CHECK(d.next());
  }

  envelope rel;
  rel.kind = envelope_kind::release;
  rel.buffers = {{0, 64}};
  rel.body = {1};
  bad.clear();
  encode(rel, bad);
  CHECK(decode_error(bad, l) == "envelope 1: a release carries no body");
  // Released ranges are in the peer's arena, checked against its size.
  rel.body.clear();
  rel.buffers = {{4096, 64}};
  bad.clear();
  encode(rel, bad);
  l.peer_arena_size = 4096;
  CHECK(decode_error(bad, l) ==
        "envelope 1: buffer 0 (offset 4096, length 64): outside the peer's arena of 4096 bytes");
  l.peer_arena_size = 8192;
  envelope_decoder d(l);
  d.feed(bad.data(), bad.size());
  CHECK(d.next());
}

TEST_CASE("envelope: the count in the reason is the envelope's place on the connection") {
  std::vector<unsigned char> stream;
  encode(sample(), stream);
  encode(sample(), stream);
  stream[40 + 32 + 5 + 5] = 99;  // the second envelope's kind
  envelope_decoder d(limits());
  std::size_t used = d.feed(stream.data(), stream.size());
  CHECK(d.next());
  d.feed(stream.data() + used, stream.size() - used);
  CHECK(d.error() == "envelope 2: unknown kind 99");
  CHECK_FALSE(d.next());
}

TEST_CASE("envelope: a stream cut mid-envelope is partial") {
  std::vector<unsigned char> b;
  encode(sample(), b);
  envelope_decoder d(limits());
  d.feed(b.data(), b.size() - 1);
  CHECK(d.partial());
  CHECK_FALSE(d.next());
  d.feed(b.data() + b.size() - 1, 1);
  CHECK(d.next());
  CHECK_FALSE(d.partial());
}
