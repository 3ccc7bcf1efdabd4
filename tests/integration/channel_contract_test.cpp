// The channel contract, as two processes see it: one parent, one forked
// peer, connected by a real channel. Written against channels::channel only,
// so every kind of channel runs the same suite (here: tcp over loopback).
#include "channel_kind.hpp"

#include <drive.hpp>
#include <pattern.hpp>

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

using namespace riomesh;
using namespace riomesh::test;
using channels::event_kind;
using channels::status;
using namespace std::chrono_literals;

namespace {

struct peer {
  std::unique_ptr<channels::channel> ch;
  pid_t pid = -1;

  // The peer's exit code (the child's body returns 0 when all it saw was right).
  int wait() {
    int st = 0;
    ::waitpid(pid, &st, 0);
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  peer() = default;
  peer(peer&& o) noexcept : ch(std::move(o.ch)), pid(o.pid) { o.pid = -1; }
  ~peer() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      wait();
    }
  }
};

// Forks a peer that connects and runs `body`; returns our end.
peer with_peer(channel_kind& kind, const std::function<int(channels::channel&)>& body) {
  kind.listen();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    auto ch = kind.connect();
    int rc = ch ? body(*ch) : 90;
    std::fflush(nullptr);
    ::_exit(rc);
  }
  peer p;
  p.pid = pid;
  p.ch = kind.accept(10s);
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
  return ch.shutdown(channels::shutdown_how::write) == status::ok;
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

void stream_both_ways(channel_kind& kind, std::size_t up, std::size_t down) {
  auto p = with_peer(kind, [&](channels::channel& ch) {
    bool ok = send_stream(ch, 2, down);
    return recv_stream(ch, 1, up) && ok ? 0 : 1;
  });
  CHECK(send_stream(*p.ch, 1, up));
  CHECK(recv_stream(*p.ch, 2, down));
  CHECK(p.wait() == 0);
}

}  // namespace

TEST_CASE("contract: stream bytes arrive in order, byte for byte, in random pieces") {
  auto kind = tcp_kind();
  stream_both_ways(*kind, 3u << 20, 5u << 20);
  stream_both_ways(*kind, 1, 0);
  stream_both_ways(*kind, 0, 0);
}

TEST_CASE("contract: an iowrite is in place before any later stream byte") {
  auto kind = tcp_kind();
  constexpr std::size_t map_size = 16u << 20;
  constexpr std::uint64_t map_offset = 0x40000000;
  // The peer maps a region, then checks each announced placement as it reads
  // the announcement.
  auto p = with_peer(*kind, [&](channels::channel& ch) {
    std::vector<unsigned char> region(map_size);
    if (ch.map(region.data(), region.size(), map_offset).st != status::ok)
      return 2;
    for (;;) {
      std::uint64_t note[3];  // offset, length, checksum; length 0 ends
      if (!recv_all(ch, note, sizeof note))
        return 3;
      if (note[1] == 0)
        break;
      if (checksum(region.data() + (note[0] - map_offset), note[1]) != note[2]) {
        std::fprintf(stderr, "placement at 0x%llx not in place when announced\n",
                     static_cast<unsigned long long>(note[0]));
        return 4;
      }
    }
    return 0;
  });
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
  auto kind = tcp_kind();
  SUBCASE("we stop sending first") {
    auto p = with_peer(*kind, [&](channels::channel& ch) {
      bool got = recv_stream(ch, 5, 1000);  // to our end of stream
      return got && send_stream(ch, 6, 200000) ? 0 : 1;
    });
    CHECK(send_stream(*p.ch, 5, 1000));
    CHECK(recv_stream(*p.ch, 6, 200000));
    CHECK(p.wait() == 0);
  }
  SUBCASE("the peer stops sending first") {
    auto p = with_peer(*kind, [&](channels::channel& ch) {
      bool sent = send_stream(ch, 7, 1000);
      return sent && recv_stream(ch, 8, 200000) ? 0 : 1;
    });
    CHECK(recv_stream(*p.ch, 7, 1000));
    unsigned char byte;
    CHECK(p.ch->recv(&byte, 1).st == status::eof);
    CHECK(send_stream(*p.ch, 8, 200000));
    CHECK(p.wait() == 0);
  }
}

TEST_CASE("contract: a peer killed mid-transfer leaves us closed with a reason, not hanging") {
  auto kind = tcp_kind();
  SUBCASE("while it sends to us") {
    auto p = with_peer(*kind, [&](channels::channel& ch) -> int {
      std::vector<unsigned char> junk(65536, 1);
      for (;;)
        send_all(ch, junk.data(), junk.size());
    });
    std::vector<unsigned char> buf(65536);
    REQUIRE(recv_all(*p.ch, buf.data(), buf.size()));
    ::kill(p.pid, SIGKILL);
    auto start = std::chrono::steady_clock::now();
    bool closed = drive(*p.ch, [&] {
      while (p.ch->recv(buf.data(), buf.size()).bytes > 0) {
      }
      return p.ch->closed();
    });
    CHECK(closed);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
    MESSAGE("reason: " << p.ch->reason());
    CHECK(p.ch->reason().find("peer 127.0.0.1:") == 0);
    p.wait();
  }
  SUBCASE("while we send to it") {
    auto p = with_peer(*kind, [&](channels::channel& ch) {
      std::vector<unsigned char> buf(4096);
      recv_all(ch, buf.data(), buf.size());
      ::pause();  // stops reading; the parent kills it
      return 0;
    });
    std::vector<unsigned char> junk(1u << 20, 2);
    REQUIRE(send_all(*p.ch, junk.data(), 4096));
    ::kill(p.pid, SIGKILL);
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
