// The tcp protocol's read-ahead: once a session is authorized in the
// clear, a frame's header is read with what follows it, so a small message
// costs one read, and the bytes read ahead go exactly where they would
// have gone had they been read one target at a time.
#include <riomesh/channels/tcp/tcp_protocol.hpp>

#include <tcp_feed.hpp>
#include <tcp_frames.hpp>

#include <doctest/doctest.h>

#include <numeric>
#include <vector>

using namespace riomesh::channels;
using namespace riomesh::channels::tcp;
using namespace riomesh::test;

namespace {

std::vector<unsigned char> pattern(std::size_t n, unsigned char seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<unsigned char>(seed + i * 13);
  return v;
}

std::vector<unsigned char> data_frame(const std::vector<unsigned char>& payload) {
  return bytes_of(make(frame_kind::data, static_cast<std::uint32_t>(payload.size()))) + payload;
}

std::vector<unsigned char> read_all(tcp_protocol& rx) {
  std::vector<unsigned char> out(1 << 16);
  auto r = rx.recv(out.data(), out.size());
  out.resize(r.bytes);
  return out;
}

// A gated receiver, authorized (in the clear unless `encrypted`), with
// one 8 KiB map at offset 0x1000, between two guards.
struct receiver {
  explicit receiver(tcp_params p = {}, bool encrypted = false) : rx(gated(p), "10.0.0.9:4242") {
    std::fill(block.begin() + guard, block.end() - guard, 0);
    REQUIRE(rx.map(block.data() + guard, 8192, 0x1000).st == status::ok);
    feed(rx, hello());
    rx.authorize(encrypted);
  }
  static tcp_params gated(tcp_params p) {
    p.gated = true;
    return p;
  }
  static constexpr long guard = 64;
  std::vector<unsigned char> block = std::vector<unsigned char>(8192 + 2 * guard, 0xAB);
  unsigned char* region = block.data() + guard;
  bool guards_intact() const {
    return std::all_of(block.begin(), block.begin() + guard, [](auto b) { return b == 0xAB; }) &&
           std::all_of(block.end() - guard, block.end(), [](auto b) { return b == 0xAB; });
  }
  tcp_protocol rx;
};

}  // namespace

TEST_CASE("read ahead: small frames and a placement behind them in one read") {
  receiver r;
  auto first = pattern(100, 1), second = pattern(900, 2), placed = pattern(500, 3);
  auto stream = data_frame(first) + data_frame(second) +
                bytes_of(make(frame_kind::iowrite, 500, 0x1000 + 64)) + placed +
                bytes_of(make(frame_kind::keepalive)) + data_frame(pattern(10, 4));
  REQUIRE(stream.size() < tcp_protocol::read_ahead_size);
  CHECK(feed(r.rx, stream) == 1);
  CHECK(r.rx.frames_received() == 6);  // the HELLO, then these five
  CHECK(read_all(r.rx) == first + second + pattern(10, 4));
  CHECK(std::equal(placed.begin(), placed.end(), r.region + 64));
  CHECK(std::all_of(r.region, r.region + 64, [](auto b) { return b == 0; }));
  CHECK(std::all_of(r.region + 564, r.region + 8192, [](auto b) { return b == 0; }));
  CHECK_FALSE(r.rx.closed());
}

TEST_CASE("read ahead: only once authorized, and never with encryption agreed") {
  tcp_params p;
  p.gated = true;
  tcp_protocol before(p, "p");
  feed(before, hello());
  iovec iov[2];
  REQUIRE(before.read_targets(iov) == 1);
  CHECK(iov[0].iov_len == header_size);  // the session's own bytes, one frame at a time
  // Encrypted, every byte after the peer's SECURE is a TLS record: not one
  // of them may be read as the clear stream.
  receiver secured({}, true);
  REQUIRE(secured.rx.read_targets(iov) == 1);
  CHECK(iov[0].iov_len == header_size);
  receiver clear;
  REQUIRE(clear.rx.read_targets(iov) == 1);
  CHECK(iov[0].iov_len == tcp_protocol::read_ahead_size);
}

TEST_CASE("read ahead: a large payload is read straight into its place after the first bytes") {
  receiver r;
  auto placed = pattern(7000, 5);
  auto stream = bytes_of(make(frame_kind::iowrite, 7000, 0x1000)) + placed + data_frame({9});
  // The header and the payload's first bytes come ahead; the rest of the
  // payload is read into the map itself, with the next header ahead again.
  CHECK(feed(r.rx, stream) == 2);
  CHECK(std::equal(placed.begin(), placed.end(), r.region));
  CHECK(r.guards_intact());
  CHECK(read_all(r.rx) == std::vector<unsigned char>{9});
}

TEST_CASE("read ahead: bytes wait for ring room, in order, and nothing else is read meanwhile") {
  tcp_params p;
  p.recv_ring = tcp_protocol::setup_ring;  // 4 KiB: fills with what one read brings
  receiver r(p);
  std::vector<unsigned char> stream, expected;
  for (unsigned char i = 0; i < 6; ++i) {
    auto payload = pattern(1500, i);
    stream = stream + data_frame(payload);
    expected = expected + payload;
  }
  std::vector<unsigned char> got;
  std::size_t fed_reads = 0, full = 0, offset = 0;
  for (int rounds = 0; rounds < 100 && got.size() < expected.size(); ++rounds) {
    iovec iov[2];
    std::size_t parts = r.rx.read_targets(iov);
    if (parts == 0) {
      // Full: not even read_target() offers room while bytes wait ahead.
      CHECK(r.rx.read_target().second == 0);
      ++full;
    } else if (offset < stream.size()) {
      std::size_t k = 0;
      for (std::size_t i = 0; i < parts && offset + k < stream.size(); ++i) {
        std::size_t n = std::min(iov[i].iov_len, stream.size() - offset - k);
        std::memcpy(iov[i].iov_base, stream.data() + offset + k, n);
        k += n;
      }
      r.rx.on_read(k);
      offset += k;
      ++fed_reads;
    }
    // The application reads a little at a time, which passes on what waits.
    std::vector<unsigned char> out(700);
    auto rd = r.rx.recv(out.data(), out.size());
    got.insert(got.end(), out.begin(), out.begin() + static_cast<long>(rd.bytes));
  }
  CHECK(got == expected);
  CHECK(full > 0);  // the case this is about came up
  CHECK(fed_reads >= 3);
  CHECK_FALSE(r.rx.closed());
}

TEST_CASE(
    "read ahead: a hostile frame behind a good one closes, and nothing lands outside the map") {
  receiver r;
  auto good = pattern(200, 6);
  auto stream = data_frame(good) + bytes_of(make(frame_kind::iowrite, 100, 0x1000 + 8150)) +
                pattern(100, 7) + data_frame({1, 2, 3});
  feed(r.rx, stream);
  CHECK(r.rx.closed());
  CHECK(r.rx.reason().find("frame 3 (IOWRITE") != std::string::npos);
  CHECK(r.rx.reason().find("outside every mapped region") != std::string::npos);
  CHECK(std::all_of(r.region, r.region + 8192, [](auto b) { return b == 0; }));
  CHECK(r.guards_intact());
}
