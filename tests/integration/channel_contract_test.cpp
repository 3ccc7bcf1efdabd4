// The channel contract, as two processes see it: the test and a peer process
// (this same program, started again in peer mode), connected by a real
// channel. Written against channels::channel only,
// so every kind of channel runs the same suite: tcp over loopback here, and
// RIOMESH_CHANNEL=rdma over soft-RoCE in the test VM.
#define DOCTEST_CONFIG_IMPLEMENT
#include "channel_kind.hpp"
#include "contract_peer.hpp"

#include <drive.hpp>
#include <pattern.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <sstream>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

using namespace riomesh;
using namespace riomesh::test;
using channels::event_kind;
using channels::status;
using namespace std::chrono_literals;

namespace {

// Our end of a connection to a peer process (contract_peer.hpp).
struct peer {
  contract_peer process;
  std::unique_ptr<channels::channel> ch;

  int wait() { return process.wait(); }
  void kill() { process.kill(); }
};

// Starts the peer that runs `spec` (see run_peer), and returns our end of
// its connection.
peer with_peer(channel_kind& kind, const std::string& spec) {
  peer p{contract_peer::start(spec, kind.listen()), nullptr};
  p.ch = kind.accept(20s);
  REQUIRE_MESSAGE(p.ch, "the peer did not connect");
  return p;
}

// Sends `total` pattern bytes in random pieces, then shuts writing down.
bool send_stream(channels::channel& ch, std::uint64_t seed, std::size_t total) {
  pattern gen(seed);
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> buf;
  for (std::size_t sent = 0; sent < total;) {
    std::size_t n = std::min<std::size_t>(total - sent, 1 + rng() % (rng() % 4 ? 4096 : 1u << 20));
    buf.resize(n);
    gen.fill(buf.data(), n);
    if (!send_all(ch, buf.data(), n))
      return false;
    sent += n;
  }
  return ch.shutdown(channels::shutdown_how::write) == status::ok &&
         drive(ch, [&] { return ch.drained(); });
}

// Receives until end of stream with random read sizes; true if it was
// exactly `total` pattern bytes.
bool recv_stream(channels::channel& ch, std::uint64_t seed, std::size_t total) {
  pattern gen(seed);
  std::mt19937_64 rng(seed + 1);
  std::vector<unsigned char> buf(1 << 20);
  std::size_t got = 0;
  bool bad = false, eof = false;
  drive(
      ch,
      [&] {
        for (;;) {
          auto r = ch.recv(buf.data(), 1 + rng() % buf.size());
          if (r.bytes > 0) {
            bad |= gen.check(buf.data(), r.bytes) != r.bytes;
            got += r.bytes;
            continue;
          }
          eof = r.st == status::eof;
          return eof || r.st == status::closed || bad;
        }
      },
      60s);
  if (bad || !eof || got != total)
    std::fprintf(stderr, "recv_stream: got %zu of %zu bytes, eof %d, corrupt %d\n", got, total, eof,
                 bad);
  return !bad && eof && got == total;
}

// Sends and receives at once, as a real peer must: with both sides only
// sending, each would wait for the other to make room.
bool duplex(channels::channel& ch, std::uint64_t send_seed, std::size_t send_total,
            std::uint64_t recv_seed, std::size_t recv_total) {
  pattern out(send_seed), in(recv_seed);
  std::mt19937_64 rng(send_seed * 31 + recv_seed);
  std::vector<unsigned char> piece, buf(1 << 20);
  std::size_t sent = 0, piece_at = 0, got = 0;
  bool bad = false, eof = false, shut = false;
  bool done = drive(
      ch,
      [&] {
        while (sent < send_total) {
          if (piece_at == piece.size()) {
            piece.resize(std::min<std::size_t>(send_total - sent,
                                               1 + rng() % (rng() % 4 ? 4096 : 1u << 20)));
            out.fill(piece.data(), piece.size());
            piece_at = 0;
          }
          auto r = ch.send(piece.data() + piece_at, piece.size() - piece_at);
          piece_at += r.bytes;
          sent += r.bytes;
          if (r.st != status::ok)
            break;
        }
        if (sent == send_total && !shut)
          shut = ch.shutdown(channels::shutdown_how::write) == status::ok;
        for (;;) {
          auto r = ch.recv(buf.data(), 1 + rng() % buf.size());
          if (r.bytes == 0) {
            eof = r.st == status::eof;
            break;
          }
          bad |= in.check(buf.data(), r.bytes) != r.bytes;
          got += r.bytes;
        }
        return (eof && shut && ch.drained()) || bad || ch.closed();
      },
      60s);
  if (!done || bad || !eof || got != recv_total || sent != send_total)
    std::fprintf(stderr, "duplex: sent %zu of %zu, got %zu of %zu, eof %d, corrupt %d: %s\n", sent,
                 send_total, got, recv_total, eof, bad, ch.reason().c_str());
  return done && !bad && eof && got == recv_total && sent == send_total;
}

void stream_both_ways(channel_kind& kind, std::size_t up, std::size_t down) {
  auto p = with_peer(kind, "duplex 2 " + std::to_string(down) + " 1 " + std::to_string(up));
  CHECK(duplex(*p.ch, 1, up, 2, down));
  CHECK(p.wait() == 0);
}

constexpr std::size_t map_size = 16u << 20;
constexpr std::uint64_t map_offset = 0x40000000;

// The peer's side of each case: 0 when everything it saw was right.
int run_peer(const std::string& spec, channels::channel& ch) {
  std::istringstream in(spec);
  std::string what;
  in >> what;
  if (what == "duplex") {
    std::uint64_t send_seed, send_total, recv_seed, recv_total;
    in >> send_seed >> send_total >> recv_seed >> recv_total;
    return duplex(ch, send_seed, send_total, recv_seed, recv_total) ? 0 : 1;
  }
  if (what == "send-then-recv" || what == "recv-then-send") {
    std::uint64_t send_seed, send_total, recv_seed, recv_total;
    in >> send_seed >> send_total >> recv_seed >> recv_total;
    if (what == "send-then-recv") {
      bool ok = send_stream(ch, send_seed, send_total);
      return recv_stream(ch, recv_seed, recv_total) && ok ? 0 : 1;
    }
    bool ok = recv_stream(ch, recv_seed, recv_total);
    return ok && send_stream(ch, send_seed, send_total) ? 0 : 1;
  }
  if (what == "check-placements") {
    // Maps a region, then checks each announced placement as it reads the
    // announcement.
    std::vector<unsigned char> region(map_size);
    if (ch.map(region.data(), region.size(), map_offset).st != status::ok)
      return 2;
    for (;;) {
      std::uint64_t note[3];  // offset, length, checksum; length 0 ends
      if (!recv_all(ch, note, sizeof note))
        return 3;
      if (note[1] == 0)
        return 0;
      if (checksum(region.data() + (note[0] - map_offset), note[1]) != note[2]) {
        std::fprintf(stderr, "placement at 0x%llx not in place when announced\n",
                     static_cast<unsigned long long>(note[0]));
        return 4;
      }
    }
  }
  if (what == "flood") {
    std::vector<unsigned char> junk(65536, 1);
    for (;;)
      send_all(ch, junk.data(), junk.size());
  }
  if (what == "read-then-stall") {
    std::vector<unsigned char> buf(4096);
    recv_all(ch, buf.data(), buf.size());
    ::pause();  // stops reading; the test kills it
  }
  std::fprintf(stderr, "unknown peer role '%s'\n", spec.c_str());
  return 99;
}

}  // namespace

TEST_CASE("contract: stream bytes arrive in order, byte for byte, in random pieces") {
  auto kind = kind_under_test();
  stream_both_ways(*kind, 3u << 20, 5u << 20);
  stream_both_ways(*kind, 1, 0);
  stream_both_ways(*kind, 0, 0);
}

TEST_CASE("contract: an iowrite is in place before any later stream byte") {
  auto kind = kind_under_test();
  auto p = with_peer(*kind, "check-placements");
  std::vector<channels::event> events;
  REQUIRE(drive(
      *p.ch,
      [&] {
        for (auto& e : events)
          if (e.kind == event_kind::peer_iomap)
            return true;
        return false;
      },
      10s, &events));
  std::mt19937_64 rng(7);
  std::vector<unsigned char> source(map_size);
  // Fresh bytes each round: placements of later rounds may land before the
  // peer reads an earlier announcement, which is fine, but not over it.
  std::uint64_t cursor = map_offset;
  for (int round = 0; round < 200 && cursor < map_offset + map_size; ++round) {
    std::size_t n = 1 + rng() % (rng() % 8 ? 16384 : map_size / 8);
    n = std::min<std::size_t>(n, map_offset + map_size - cursor);
    std::uint64_t at = cursor;
    cursor += n + rng() % 64;
    for (std::size_t i = 0; i < n; ++i)
      source[i] = static_cast<unsigned char>(rng());
    std::size_t done = 0;
    bool finished = false;
    REQUIRE(drive(
        *p.ch,
        [&] {
          if (done < n)
            done += p.ch->iowrite(source.data() + done, n - done, at + done, round).bytes;
          for (auto& e : events)
            finished |= e.kind == event_kind::iowrite_done;
          events.clear();
          return done == n && finished;  // the source is ours again
        },
        20s, &events));
    std::uint64_t note[3] = {at, n, checksum(source.data(), n)};
    REQUIRE(send_all(*p.ch, note, sizeof note));
  }
  std::uint64_t end[3] = {0, 0, 0};
  REQUIRE(send_all(*p.ch, end, sizeof end));
  CHECK(p.wait() == 0);
}

TEST_CASE("contract: shutdown of one direction leaves the other open") {
  auto kind = kind_under_test();
  SUBCASE("we stop sending first") {
    auto p = with_peer(*kind, "recv-then-send 6 200000 5 1000");
    CHECK(send_stream(*p.ch, 5, 1000));
    CHECK(recv_stream(*p.ch, 6, 200000));
    CHECK(p.wait() == 0);
  }
  SUBCASE("the peer stops sending first") {
    auto p = with_peer(*kind, "send-then-recv 7 1000 8 200000");
    CHECK(recv_stream(*p.ch, 7, 1000));
    unsigned char byte;
    CHECK(p.ch->recv(&byte, 1).st == status::eof);
    CHECK(send_stream(*p.ch, 8, 200000));
    CHECK(p.wait() == 0);
  }
}

TEST_CASE("contract: a peer killed mid-transfer leaves us closed with a reason, not hanging") {
  auto kind = kind_under_test();
  SUBCASE("while it sends to us") {
    auto p = with_peer(*kind, "flood");
    std::vector<unsigned char> buf(65536);
    REQUIRE(recv_all(*p.ch, buf.data(), buf.size()));
    p.kill();
    auto start = std::chrono::steady_clock::now();
    bool closed = drive(*p.ch, [&] {
      while (p.ch->recv(buf.data(), buf.size()).bytes > 0) {
      }
      return p.ch->closed();
    });
    CHECK(closed);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    MESSAGE("reason: " << p.ch->reason());
    CHECK(p.ch->reason().find("peer ") != std::string::npos);
    p.wait();
  }
  SUBCASE("while we send to it") {
    auto p = with_peer(*kind, "read-then-stall");
    std::vector<unsigned char> junk(1u << 20, 2);
    REQUIRE(send_all(*p.ch, junk.data(), 4096));
    p.kill();
    p.wait();
    auto start = std::chrono::steady_clock::now();
    bool closed = drive(*p.ch, [&] {
      p.ch->send(junk.data(), junk.size());
      return p.ch->closed();
    });
    CHECK(closed);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    MESSAGE("reason: " << p.ch->reason());
    CHECK(p.ch->send(junk.data(), 1).st == status::closed);
  }
}

int main(int argc, char** argv) {
  if (const char* spec = std::getenv("RIOMESH_CONTRACT_PEER")) {
    auto kind = kind_under_test();
    auto ch = kind->connect(std::getenv("RIOMESH_CONTRACT_AT"));
    int rc = ch ? run_peer(spec, *ch) : 90;
    if (ch)  // the last bytes leave before the process (and its channel) does
      drive(
          *ch, [&] { return ch->drained() || ch->closed(); }, 10s);
    std::fflush(nullptr);
    ::_exit(rc);  // skip static destructors: the test owns the terminal
  }
  doctest::Context context(argc, argv);
  int rc = context.run();
  contract_peer::finish_remote();
  return rc;
}
