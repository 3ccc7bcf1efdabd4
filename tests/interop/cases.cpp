#include "cases.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace riomesh::interop {
namespace {

using clock_type = std::chrono::steady_clock;

// The byte at position i of transfer `seq`: both sides compute it.
unsigned char fill(std::uint64_t seq, std::size_t i) {
  return static_cast<unsigned char>((seq * 131 + i * 7 + (i >> 8)) ^ (seq >> 3));
}

void fill_buffer(unsigned char* p, std::size_t n, std::uint64_t seq) {
  for (std::size_t i = 0; i < n; ++i)
    p[i] = fill(seq, i);
}

// The first position where [p, p + n) differs from transfer `seq`, or n.
std::size_t first_difference(const unsigned char* p, std::size_t n, std::uint64_t seq) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != fill(seq, i))
      return i;
  return n;
}

bool fail(peer_api& api, const std::string& what) {
  std::fprintf(stderr, "%s: %s%s%s\n", api.name(), what.c_str(), api.error().empty() ? "" : ": ",
               api.error().c_str());
  return false;
}

bool recv_exact(peer_api& api, void* out, std::size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  for (std::size_t got = 0; got < n;) {
    long r = api.recv_some(p + got, n - got);
    if (r <= 0)
      return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

// ---- ordering ---------------------------------------------------------------

constexpr std::uint64_t ordering_base = 0x10000;  // the map's offset
constexpr std::size_t ordering_slots = 8;
constexpr std::size_t ordering_slot_size = 32 * 1024;
constexpr std::uint64_t ordering_count = 600;
constexpr std::size_t ordering_sizes[] = {1, 17, 512, 4095, 4096, 20000, 32768};

struct record {
  std::uint64_t seq, offset, length, filler;
};

record ordering_record(std::uint64_t k) {
  auto len = ordering_sizes[k % (sizeof ordering_sizes / sizeof ordering_sizes[0])];
  return {k, ordering_base + (k % ordering_slots) * ordering_slot_size, len, (k * 13) % 3000};
}

bool ordering_writer(peer_api& api) {
  std::uint64_t ready = 0;
  if (!recv_exact(api, &ready, sizeof ready))
    return fail(api, "no ready message");
  std::vector<unsigned char> data(ordering_slot_size), filler(3000);
  std::uint64_t acked = 0;
  auto take_ack = [&] {
    std::uint64_t ack = 0;
    if (!recv_exact(api, &ack, sizeof ack) || ack != acked)
      return fail(api, "ack " + std::to_string(acked) + " missing or wrong");
    ++acked;
    return true;
  };
  for (std::uint64_t k = 0; k < ordering_count; ++k) {
    // The reader must have checked the slot's previous use before we reuse it.
    if (k >= ordering_slots && !take_ack())
      return false;
    auto rec = ordering_record(k);
    fill_buffer(data.data(), rec.length, k);
    if (api.riowrite(data.data(), rec.length, rec.offset) != write_result::ok)
      return fail(api, "riowrite " + std::to_string(k));
    fill_buffer(filler.data(), rec.filler, ~k);
    if (!api.send_all(&rec, sizeof rec) || !api.send_all(filler.data(), rec.filler))
      return fail(api, "record " + std::to_string(k));
  }
  while (acked < ordering_count)
    if (!take_ack())
      return false;
  return true;
}

bool ordering_reader(peer_api& api) {
  std::vector<unsigned char> region(ordering_slots * ordering_slot_size), filler(3000);
  if (!api.riomap(region.data(), region.size(), ordering_base))
    return fail(api, "riomap");
  std::uint64_t ready = 1;  // carries the map's publication before it
  if (!api.send_all(&ready, sizeof ready))
    return fail(api, "ready");
  for (std::uint64_t k = 0; k < ordering_count; ++k) {
    record rec{}, want = ordering_record(k);
    if (!recv_exact(api, &rec, sizeof rec) || std::memcmp(&rec, &want, sizeof rec) != 0)
      return fail(api, "record " + std::to_string(k) + " missing or wrong");
    // Placed before the record that announced it: check before anything else.
    auto* at = region.data() + (rec.offset - ordering_base);
    auto bad = first_difference(at, rec.length, k);
    if (bad != rec.length)
      return fail(api, "transfer " + std::to_string(k) + ": placed byte " + std::to_string(bad) +
                           " of " + std::to_string(rec.length) + " differs");
    if (!recv_exact(api, filler.data(), rec.filler) ||
        first_difference(filler.data(), rec.filler, ~k) != rec.filler)
      return fail(api, "stream filler after record " + std::to_string(k));
    if (!api.send_all(&k, sizeof k))
      return fail(api, "ack");
  }
  return api.riounmap(region.data(), region.size(), ordering_base) || fail(api, "riounmap");
}

// ---- maps -------------------------------------------------------------------

struct map_spec {
  std::uint64_t offset, length;
};
constexpr map_spec map_specs[] = {
    {0, 4096}, {1u << 20, 65536}, {3u << 20, 1000}, {0x100000000ull, 256 * 1024}};
constexpr std::size_t map_count = sizeof map_specs / sizeof map_specs[0];
constexpr std::uint64_t unmapped_offset = 7u << 20;

bool maps_writer(peer_api& api) {
  std::vector<unsigned char> data(256 * 1024);
  for (std::uint64_t round = 0; round < 2; ++round) {
    std::uint64_t go = 0;
    if (!recv_exact(api, &go, sizeof go) || go != round)
      return fail(api, "no table for round " + std::to_string(round));
    for (std::size_t i = 0; i < map_count; ++i) {
      auto& m = map_specs[i];
      fill_buffer(data.data(), m.length, round * 16 + i);
      // In two pieces: the second starts inside the map, not at its offset.
      std::size_t half = m.length / 2 + 3;
      if (api.riowrite(data.data(), half, m.offset) != write_result::ok ||
          api.riowrite(data.data() + half, m.length - half, m.offset + half) != write_result::ok)
        return fail(api, "riowrite into map " + std::to_string(i));
    }
    if (round == 1 && api.riowrite(data.data(), 64, unmapped_offset) != write_result::no_mapping)
      return fail(api, "a riowrite to an unmapped offset was not refused");
    if (!api.send_all(&round, sizeof round))
      return fail(api, "done message");
  }
  std::uint64_t end = 0;
  return recv_exact(api, &end, sizeof end) || fail(api, "end message");
}

bool maps_reader(peer_api& api) {
  std::vector<std::vector<unsigned char>> bufs;
  for (auto& m : map_specs)
    bufs.emplace_back(m.length);
  for (std::size_t i = 0; i < map_count; ++i)
    if (!api.riomap(bufs[i].data(), map_specs[i].length, map_specs[i].offset))
      return fail(api, "riomap " + std::to_string(i));
  for (std::uint64_t round = 0; round < 2; ++round) {
    if (round == 1) {
      // Replace map 1 by a fresh buffer at the same offset: the peer must
      // write into the new one, never the old.
      std::vector<unsigned char> fresh(map_specs[1].length);
      if (!api.riounmap(bufs[1].data(), map_specs[1].length, map_specs[1].offset) ||
          !api.riomap(fresh.data(), fresh.size(), map_specs[1].offset))
        return fail(api, "replacing map 1");
      std::fill(bufs[1].begin(), bufs[1].end(), 0);
      std::swap(bufs[1], fresh);
      bufs.push_back(std::move(fresh));  // the old one, kept alive to check it stays untouched
    }
    if (!api.send_all(&round, sizeof round))
      return fail(api, "table");
    std::uint64_t done = 0;
    if (!recv_exact(api, &done, sizeof done) || done != round)
      return fail(api, "no done message for round " + std::to_string(round));
    for (std::size_t i = 0; i < map_count; ++i) {
      auto bad = first_difference(bufs[i].data(), map_specs[i].length, round * 16 + i);
      if (bad != map_specs[i].length)
        return fail(api, "round " + std::to_string(round) + ", map " + std::to_string(i) +
                             ": byte " + std::to_string(bad) + " differs");
    }
    if (round == 1)
      for (unsigned char c : bufs.back())
        if (c != 0)
          return fail(api, "the unmapped buffer was written to");
  }
  std::uint64_t end = 2;
  return api.send_all(&end, sizeof end) || fail(api, "end message");
}

// ---- shutdown ---------------------------------------------------------------

constexpr std::size_t first_bytes = 300 * 1024, second_bytes = 70 * 1024;

// Reads to end of stream: exactly `n` bytes of transfer `seq`.
bool read_to_end(peer_api& api, std::size_t n, std::uint64_t seq) {
  std::vector<unsigned char> in(n + 1);
  std::size_t got = 0;
  for (;;) {
    long r = api.recv_some(in.data() + got, in.size() - got);
    if (r < 0)
      return fail(api, "recv before end of stream");
    if (r == 0)
      break;
    got += static_cast<std::size_t>(r);
    if (got > n)
      return fail(api, "more bytes than were sent");
  }
  if (got != n || first_difference(in.data(), n, seq) != n)
    return fail(api, "stream cut short or changed: " + std::to_string(got) + " of " +
                         std::to_string(n) + " bytes");
  return true;
}

bool shutdown_role(peer_api& api, bool first) {
  std::vector<unsigned char> out(first ? first_bytes : second_bytes);
  fill_buffer(out.data(), out.size(), first ? 1 : 2);
  if (!first && !read_to_end(api, first_bytes, 1))
    return false;
  if (!api.send_all(out.data(), out.size()) || !api.shutdown_write())
    return fail(api, "send, then shut down writing");
  return !first || read_to_end(api, second_bytes, 2);
}

// ---- late ---------------------------------------------------------------------

// The answer is long enough to be still on its way when the late bytes
// come: a peer that took them for a broken stream would cut it short.
constexpr std::size_t late_bytes = 4096, late_answer = 4 << 20;

// Sends, shuts down writing, then sends again: librdmacm's rsend lets it
// while it holds credits; riomesh's refuses. Then reads the answer whole.
bool late_shutter(peer_api& api) {
  std::vector<unsigned char> out(first_bytes);
  fill_buffer(out.data(), out.size(), 4);
  if (!api.send_all(out.data(), out.size()) || !api.shutdown_write())
    return fail(api, "send, then shut down writing");
  long late = api.send_some(out.data(), late_bytes);
  std::printf("%s: %ld bytes sent after shutting down writing\n", api.name(), late);
  return read_to_end(api, late_answer, 5);
}

// Reads to the end of the stream (the late bytes, if they come at all,
// after the first ones), then answers in full: the late bytes must not
// cost the shutter a byte of the answer.
bool late_answerer(peer_api& api) {
  std::vector<unsigned char> in(first_bytes + late_bytes + 1);
  std::size_t got = 0;
  // Stops for a while where the ring (128 KiB by default on both sides)
  // has room for all the rest: the rest, the SHUTDOWN and the late bytes
  // then arrive together, and the late bytes are taken in behind unread
  // ones. A reader that dropped them from the wrong end lost stream bytes
  // instead (seen across two hosts).
  constexpr std::size_t pause_at = 192 * 1024;
  for (long r;;) {
    std::size_t room = got < pause_at ? pause_at - got : in.size() - got;
    if ((r = api.recv_some(in.data() + got, room)) == 0)
      break;
    if (r < 0)
      return fail(api, "recv before end of stream");
    got += static_cast<std::size_t>(r);
    if (got > first_bytes + late_bytes)
      return fail(api, "more bytes than were sent");
    if (got == pause_at)
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  if (got < first_bytes || first_difference(in.data(), first_bytes, 4) != first_bytes)
    return fail(api, "stream cut short or changed: " + std::to_string(got) + " bytes");
  std::printf("%s: %zu bytes before the end of the stream\n", api.name(), got);
  std::vector<unsigned char> out(late_answer);
  fill_buffer(out.data(), out.size(), 5);
  if (!api.send_all(out.data(), out.size()) || !api.shutdown_write())
    return fail(api, "answer, then shut down writing");
  api.close();
  return true;
}

// ---- close --------------------------------------------------------------------

constexpr std::size_t close_after = 512 * 1024;

bool streamer(peer_api& api) {
  std::vector<unsigned char> out(64 * 1024);
  fill_buffer(out.data(), out.size(), 3);
  auto deadline = clock_type::now() + std::chrono::seconds(60);
  std::size_t sent = 0;
  while (clock_type::now() < deadline) {
    long r = api.send_some(out.data() + sent % out.size(), out.size() - sent % out.size());
    if (r < 0) {
      std::printf("%s: send failed after %zu bytes, as it should: %s\n", api.name(), sent,
                  api.error().c_str());
      return sent >= close_after || fail(api, "failed before the closer left");
    }
    sent += static_cast<std::size_t>(r);
  }
  return fail(api, "still sending 60 s after the closer left");
}

bool closer(peer_api& api, bool vanish) {
  std::vector<unsigned char> in(64 * 1024);
  for (std::size_t got = 0; got < close_after;) {
    long r = api.recv_some(in.data(), std::min(in.size(), close_after - got));
    if (r <= 0)
      return fail(api, "stream ended early");
    for (long i = 0; i < r; ++i)
      if (in[static_cast<std::size_t>(i)] !=
          fill(3, (got + static_cast<std::size_t>(i)) % in.size()))
        return fail(api, "stream byte " + std::to_string(got + static_cast<std::size_t>(i)));
    got += static_cast<std::size_t>(r);
  }
  if (vanish) {
    std::fflush(nullptr);
    std::_Exit(0);  // no close, no disconnect: the kernel tears the QP down
  }
  api.close();
  return true;
}

// ---- unmapped -----------------------------------------------------------------

constexpr std::uint64_t unmapped_at = 0x20000;
constexpr std::size_t unmapped_size = 64 * 1024;

bool mapper(peer_api& api) {
  std::vector<unsigned char> region(unmapped_size);
  std::uint64_t word = 1;
  if (!api.riomap(region.data(), region.size(), unmapped_at) || !api.send_all(&word, 8))
    return fail(api, "map and say so");
  if (!recv_exact(api, &word, 8))
    return fail(api, "no word that the first write landed");
  if (first_difference(region.data(), 4096, 5) != 4096)
    return fail(api, "the first write did not land");
  if (!api.riounmap(region.data(), region.size(), unmapped_at) || !api.send_all(&word, 8))
    return fail(api, "unmap and say so");
  // The writer's last word, or the end of the connection. A librdmacm
  // mapper may hear neither: rsockets has no keepalive, and a write into
  // memory it took back can break the connection without a word.
  if (api.poll_in(5000) == 1) {
    long got = api.recv_some(&word, 8);
    std::printf("%s: mapper: then %s\n", api.name(),
                got > 0    ? "the writer's last word"
                : got == 0 ? "end of stream"
                           : "an error");
  } else {
    std::printf("%s: mapper: no word from the writer within 5 s\n", api.name());
  }
  std::fflush(nullptr);
  std::_Exit(0);  // librdmacm's rclose may wait for a peer that is gone
}

bool unmapped_writer(peer_api& api) {
  std::vector<unsigned char> data(4096);
  fill_buffer(data.data(), data.size(), 5);
  std::uint64_t word = 0;
  if (!recv_exact(api, &word, 8))
    return fail(api, "no ready word");
  if (api.riowrite(data.data(), data.size(), unmapped_at) != write_result::ok ||
      !api.send_all(&word, 8))
    return fail(api, "the first write, into the map");
  if (!recv_exact(api, &word, 8))
    return fail(api, "no word that the map is gone");
  auto start = clock_type::now();
  auto r = api.riowrite(data.data(), data.size(), unmapped_at);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start);
  // A riomesh mapper zeroes our entry (no mapping); a librdmacm one leaves
  // it, and the write fails at its queue pair or, where the device still
  // knows the key, lands. Whichever: the call returns, it does not hang.
  std::printf("%s: riowrite into the withdrawn map returned %s after %lld ms%s%s\n", api.name(),
              r == write_result::ok           ? "ok"
              : r == write_result::no_mapping ? "no mapping"
                                              : "failed",
              static_cast<long long>(ms.count()), api.error().empty() ? "" : ": ",
              api.error().c_str());
  if (ms > std::chrono::seconds(10))
    return fail(api, "the write returned only after its connection timed out");
  // The conversation ends in band if the connection still stands.
  bool said = api.send_all(&word, 8);
  std::printf("%s: last word %s%s\n", api.name(),
              said ? "sent" : "not sent: ", said ? "" : api.error().c_str());
  api.close();
  return true;
}

// ---- edge ---------------------------------------------------------------------
// A write that reaches the end of its entry with bytes left: riomesh goes on
// into a contiguous next entry, else returns what it wrote (no mapping);
// librdmacm v44 keeps its entry and posts zero-length writes for ever. The
// mapper must do no work for such a writer.

constexpr std::uint64_t edge_at = 0x30000;
constexpr std::size_t edge_size = 4096;

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

bool edge_mapper(peer_api& api) {
  std::vector<unsigned char> region(edge_size);
  std::uint64_t word = 1;
  if (!api.riomap(region.data(), region.size(), edge_at) || !api.send_all(&word, 8))
    return fail(api, "map and say so");
  // The writer now writes twice the entry; we only wait, as an idle socket.
  double before = cpu_seconds();
  api.poll_in(3000);
  double spent = cpu_seconds() - before;
  std::printf("%s: mapper CPU while the writer wrote past its entry: %.3f s in 3 s\n", api.name(),
              spent);
  if (first_difference(region.data(), edge_size, 7) != edge_size)
    return fail(api, "the writer's bytes up to the entry's end did not land");
  if (spent > 0.3)
    return fail(api, "the mapper worked for a writer past the end of its map");
  std::fflush(nullptr);
  std::_Exit(0);  // a spinning librdmacm writer would never let close finish
}

bool edge_writer(peer_api& api) {
  std::vector<unsigned char> data(2 * edge_size);
  fill_buffer(data.data(), data.size(), 7);
  std::uint64_t word = 0;
  if (!recv_exact(api, &word, 8))
    return fail(api, "no ready word");
  auto r = api.riowrite(data.data(), data.size(), edge_at);
  std::printf("%s: riowrite past the entry's end: %s (%s)\n", api.name(),
              r == write_result::no_mapping ? "stopped at the end: no mapping beyond" : "other",
              api.error().c_str());
  return r == write_result::no_mapping || fail(api, "expected a short write, no mapping beyond");
}

// ---- eof ----------------------------------------------------------------------

constexpr std::size_t eof_bytes = 100 * 1024;

bool eof_sender(peer_api& api) {
  std::vector<unsigned char> out(eof_bytes);
  fill_buffer(out.data(), out.size(), 6);
  if (!api.send_all(out.data(), out.size()) || !api.shutdown_write())
    return fail(api, "send, then shut down writing");
  unsigned char sink[256];
  while (api.recv_some(sink, sizeof sink) > 0) {
  }
  return true;
}

bool eof_poller(peer_api& api) {
  std::vector<unsigned char> in(eof_bytes);
  if (!recv_exact(api, in.data(), in.size()) ||
      first_difference(in.data(), in.size(), 6) != in.size())
    return fail(api, "the stream before its end");
  // All read; the peer has shut down: readable, as a socket at end of stream.
  int ready = api.poll_in(5000);
  if (ready != 1)
    return fail(api, "poll for input at end of stream gave " + std::to_string(ready));
  unsigned char one = 0;
  if (api.recv_some(&one, 1) != 0)
    return fail(api, "a read at end of stream did not return 0");
  api.close();
  return true;
}

}  // namespace

bool known_case(const std::string& name, const std::string& role) {
  return (name == "ordering" && (role == "writer" || role == "reader")) ||
         (name == "maps" && (role == "writer" || role == "reader")) ||
         (name == "shutdown" && (role == "first" || role == "second")) ||
         (name == "late" && (role == "shutter" || role == "answerer")) ||
         (name == "close" && (role == "streamer" || role == "closer" || role == "vanish")) ||
         (name == "unmapped" && (role == "mapper" || role == "writer")) ||
         (name == "eof" && (role == "sender" || role == "poller")) ||
         (name == "edge" && (role == "mapper" || role == "writer"));
}

bool run_case(const std::string& name, const std::string& role, peer_api& api) {
  if (name == "ordering")
    return role == "writer" ? ordering_writer(api) : ordering_reader(api);
  if (name == "maps")
    return role == "writer" ? maps_writer(api) : maps_reader(api);
  if (name == "shutdown")
    return shutdown_role(api, role == "first");
  if (name == "late")
    return role == "shutter" ? late_shutter(api) : late_answerer(api);
  if (name == "close")
    return role == "streamer" ? streamer(api) : closer(api, role == "vanish");
  if (name == "unmapped")
    return role == "mapper" ? mapper(api) : unmapped_writer(api);
  if (name == "eof")
    return role == "sender" ? eof_sender(api) : eof_poller(api);
  if (name == "edge")
    return role == "mapper" ? edge_mapper(api) : edge_writer(api);
  return false;
}

}  // namespace riomesh::interop
