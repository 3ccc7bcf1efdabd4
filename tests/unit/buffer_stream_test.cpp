// Buffers larger than the arena: split into pieces on one side, assembled
// on the other, and a lying peer's pieces refused.
#include <riomesh/actors/connection/buffer_stream.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

using namespace riomesh;
using namespace riomesh::actors;

namespace {

buffer counting(std::size_t n) {
  auto b = buffer::heap(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>(i * 7 + i / 251);
  return b;
}

// Plays the receiver: pieces arrive as views, the message completes them.
std::vector<buffer> receive(stream_assembly& a, std::vector<outbound_message>& parts) {
  std::string error;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    auto& p = parts[i];
    p.env.buffers = {{0, p.placed[0].size()}};
    REQUIRE_MESSAGE(a.add_piece(p.env, p.placed[0], error), error);
  }
  auto& last = parts.back();
  std::vector<buffer> placed = last.placed;
  REQUIRE_MESSAGE(a.complete(last.env, placed, error), error);
  return placed;
}

}  // namespace

TEST_CASE("buffer stream: a buffer beyond the arena goes in pieces and arrives whole") {
  outbound_message m;
  m.env.receiver = 9;
  auto small = counting(100), big = counting(10'000);
  m.placed = {small, big};
  auto parts = split_for_arena(std::move(m), 4096, 1024);
  // 10000 = 9 pieces of 1024, the last 784 bytes with the message.
  REQUIRE(parts.size() == 10);
  for (std::size_t i = 0; i < 9; ++i) {
    CHECK(parts[i].env.kind == envelope_kind::piece);
    CHECK(parts[i].env.receiver == 9);
    CHECK(parts[i].placed.size() == 1);
    CHECK(parts[i].placed[0].size() == 1024);
    CHECK(parts[i].placed[0].data() == big.data() + i * 1024);  // slices: no copy to send
  }
  CHECK(parts.back().placed[1].size() == 10'000 - 9 * 1024);
  stream_assembly a({1 << 20, 8});
  auto got = receive(a, parts);
  CHECK(a.idle());
  REQUIRE(got.size() == 2);
  CHECK(got[0].data() == small.data());  // small enough: untouched
  REQUIRE(got[1].size() == big.size());
  CHECK(std::equal(got[1].begin(), got[1].end(), big.begin()));
}

TEST_CASE("buffer stream: buffers that fit are not split") {
  outbound_message m;
  m.placed = {counting(4096)};
  auto parts = split_for_arena(std::move(m), 4096, 1024);
  CHECK(parts.size() == 1);
}

TEST_CASE("buffer stream: a lying peer is refused with the reason") {
  std::string error;
  auto piece_env = [](std::uint32_t index, std::uint64_t total) {
    envelope e;
    e.kind = envelope_kind::piece;
    e.buffers = {{0, 1024}};
    for (int i = 0; i < 4; ++i)
      e.body.push_back(static_cast<unsigned char>(index >> (8 * i)));
    for (int i = 0; i < 8; ++i)
      e.body.push_back(static_cast<unsigned char>(total >> (8 * i)));
    return e;
  };
  auto piece = counting(1024);
  {
    stream_assembly a({1 << 20, 8});
    CHECK_FALSE(a.add_piece(piece_env(0, 1ull << 40), piece, error));
    CHECK(error ==
          "a streamed buffer of 1099511627776 bytes, with 0 already in assembly (at "
          "most 1048576 at once: channel.max_streamed)");
  }
  {
    stream_assembly a({1 << 20, 8});
    CHECK_FALSE(a.add_piece(piece_env(0, 1024), piece, error));  // fills it: no tail left
    CHECK(error.find("overruns") != std::string::npos);
  }
  {
    stream_assembly a({1 << 20, 8});
    REQUIRE(a.add_piece(piece_env(0, 4096), piece, error));
    CHECK_FALSE(a.add_piece(piece_env(0, 8192), piece, error));
    CHECK(error == "buffer 0 changed its size mid-stream");
  }
  {
    stream_assembly a({1 << 20, 8});
    REQUIRE(a.add_piece(piece_env(3, 4096), piece, error));
    std::vector<buffer> placed = {counting(10)};
    CHECK_FALSE(a.complete(envelope{}, placed, error));
    CHECK(error == "buffer 3 was streamed, but the message has 1 buffers");
    CHECK(a.idle());
  }
  {
    stream_assembly a({1 << 20, 8});
    REQUIRE(a.add_piece(piece_env(0, 4096), piece, error));
    std::vector<buffer> placed = {counting(10)};
    CHECK_FALSE(a.complete(envelope{}, placed, error));
    CHECK(error == "buffer 0 ends at 1034 of its 4096 bytes");
  }
}

TEST_CASE("buffer stream: what is in assembly at once is bounded by count and bytes") {
  std::string error;
  auto piece_env = [](std::uint32_t index, std::uint64_t total) {
    envelope e;
    e.kind = envelope_kind::piece;
    e.buffers = {{0, 64}};
    for (int i = 0; i < 4; ++i)
      e.body.push_back(static_cast<unsigned char>(index >> (8 * i)));
    for (int i = 0; i < 8; ++i)
      e.body.push_back(static_cast<unsigned char>(total >> (8 * i)));
    return e;
  };
  auto piece = counting(64);
  {
    // A new buffer index in every piece: each would hold its whole size.
    stream_assembly a({1 << 30, 4});
    for (std::uint32_t i = 0; i < 4; ++i)
      REQUIRE(a.add_piece(piece_env(i, 1 << 20), piece, error));
    CHECK_FALSE(a.add_piece(piece_env(4, 1 << 20), piece, error));
    CHECK(error == "buffer 4: more than 4 buffers streaming at once (channel.max_streams)");
  }
  {
    stream_assembly a({3 << 20, 8});
    REQUIRE(a.add_piece(piece_env(0, 2 << 20), piece, error));
    CHECK_FALSE(a.add_piece(piece_env(1, 2 << 20), piece, error));
    CHECK(error ==
          "a streamed buffer of 2097152 bytes, with 2097152 already in assembly (at "
          "most 3145728 at once: channel.max_streamed)");
    // More pieces of a stream already counted are fine.
    CHECK(a.add_piece(piece_env(0, 2 << 20), piece, error));
  }
}
