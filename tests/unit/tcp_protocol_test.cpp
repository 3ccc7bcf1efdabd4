// The tcp channel's protocol without sockets: two protocol objects joined in
// memory, and hand-made frames for everything a hostile peer might send.
#include <riomesh/channels/tcp/tcp_protocol.hpp>

#include <tcp_feed.hpp>
#include <tcp_frames.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

using namespace riomesh::channels;
using namespace riomesh::channels::tcp;
using namespace riomesh::test;

namespace {

// A receiver with one 4 KiB map at offset 0x1000; returns the reason it
// closed after `bytes` (empty if it did not).
std::string after(const std::vector<unsigned char>& bytes,
                  std::vector<unsigned char>* map = nullptr) {
  tcp_params p;
  p.max_frame = 1 << 20;
  tcp_protocol rx(p, "10.0.0.9:4242");
  std::vector<unsigned char> local(4096);
  rx.map(map ? map->data() : local.data(), map ? map->size() : local.size(), 0x1000);
  feed(rx, bytes);
  return rx.reason();
}

}  // namespace

TEST_CASE("frames: a 24-byte little-endian header") {
  auto h = encode(make(frame_kind::iowrite, 0x01020304, 0x1122334455667788ull, 9));
  CHECK(h[0] == 3);
  CHECK(h[1] == 0);
  CHECK(h[4] == 0x04);
  CHECK(h[7] == 0x01);
  CHECK(h[8] == 0x88);
  CHECK(h[15] == 0x11);
  CHECK(h[16] == 9);
  auto f = decode(h.data());
  CHECK(f.kind == frame_kind::iowrite);
  CHECK(f.length == 0x01020304u);
  CHECK(f.offset == 0x1122334455667788ull);
  CHECK(describe(f) == "IOWRITE offset 0x1122334455667788 length 16909060");
}

TEST_CASE("stream bytes and placed bytes arrive, placed ones straight into the map") {
  tcp_protocol a({}, "a"), b({}, "b");
  std::vector<unsigned char> region(8192, 0);
  REQUIRE(b.map(region.data(), region.size(), 0x10000).st == status::ok);
  pump(b, a);
  pump(a, b);
  std::vector<event> ev;
  a.take_events(ev);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::peer_iomap);
  CHECK(ev[0].token == 0x10000);
  CHECK(ev[0].bytes == 8192);

  std::vector<unsigned char> src(5000);
  for (std::size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<unsigned char>(i * 7);
  CHECK(a.iowrite(src.data(), src.size(), 0x10000 + 100, 42).bytes == 5000);
  const char text[] = "after the placement";
  CHECK(a.send(text, sizeof text).bytes == sizeof text);
  a.detach();
  // The receiver is told to read the IOWRITE payload into the map itself.
  iovec iov[8];
  a.write_iov(iov, 8);
  feed(b, {static_cast<unsigned char*>(iov[0].iov_base),
           static_cast<unsigned char*>(iov[0].iov_base) + iov[0].iov_len});
  a.on_written(iov[0].iov_len);
  CHECK(b.read_target().first == region.data() + 100);
  pump(a, b);
  CHECK(std::equal(src.begin(), src.end(), region.begin() + 100));
  char out[64] = {};
  CHECK(b.recv(out, sizeof out).bytes == sizeof text);
  CHECK(std::string{out} == text);
  ev.clear();
  a.take_events(ev);
  REQUIRE(!ev.empty());
  CHECK(ev.back().kind == event_kind::iowrite_done);
  CHECK(ev.back().token == 42);
}

TEST_CASE("iowrite splits at map ends and stops where no map is") {
  tcp_protocol a({}, "a"), b({}, "b");
  std::vector<unsigned char> r1(100), r2(100);
  b.map(r1.data(), 100, 0);
  b.map(r2.data(), 100, 100);
  pump(b, a);
  std::vector<unsigned char> src(250, 9);
  auto r = a.iowrite(src.data(), src.size(), 50, 1);
  CHECK(r.bytes == 150);
  CHECK(r.st == status::no_mapping);
  CHECK(a.iowrite(src.data(), 10, 5000, 2).st == status::no_mapping);
  pump(a, b);
  CHECK(r1[50] == 9);
  CHECK(r2[99] == 9);
}

TEST_CASE(
    "pieces written as one: one frame per map and max_frame, each payload gathered from "
    "the pieces it spans, and one completion") {
  tcp_params p;
  p.max_frame = 1000;
  tcp_protocol a(p, "a"), b(p, "b");
  std::vector<unsigned char> r1(3000, 0), r2(2000, 0);
  b.map(r1.data(), r1.size(), 0);
  b.map(r2.data(), r2.size(), 3000);
  pump(b, a);
  pump(a, b);
  // Pieces of 1 byte to 1700, 4500 bytes in all, written from offset 200:
  // the first map's end at 3000 and max_frame cut frames across pieces.
  std::vector<std::vector<unsigned char>> memory;
  std::vector<channel::piece> pieces;
  std::vector<unsigned char> flat;
  for (std::size_t n : {1, 1700, 3, 999, 1797}) {
    memory.emplace_back(n);
    for (std::size_t i = 0; i < n; ++i)
      memory.back()[i] = static_cast<unsigned char>(flat.size() + i * 13);
    flat.insert(flat.end(), memory.back().begin(), memory.back().end());
    pieces.push_back({memory.back().data(), n});
  }
  auto frames_before = b.frames_received();
  auto r = a.iowrite_pieces(pieces.data(), pieces.size(), 200, 77);
  CHECK(r.bytes == 4500);
  CHECK(r.st == status::ok);
  pump(a, b);
  // 2800 bytes to the first map's end in frames of 1000, then 1700.
  CHECK(b.frames_received() - frames_before == 5);
  CHECK(std::equal(flat.begin(), flat.begin() + 2800, r1.begin() + 200));
  CHECK(std::equal(flat.begin() + 2800, flat.end(), r2.begin()));
  CHECK(r1[199] == 0);
  CHECK(r2[1700] == 0);
  std::vector<event> ev;
  a.take_events(ev);
  std::size_t done = 0;
  for (auto& e : ev)
    if (e.kind == event_kind::iowrite_done) {
      ++done;
      CHECK(e.token == 77);
      CHECK(e.bytes == 4500);
    }
  CHECK(done == 1);
  // Past the maps, the pieces stop where the map does.
  auto past = a.iowrite_pieces(pieces.data(), pieces.size(), 4000, 78);
  CHECK(past.bytes == 1000);
  CHECK(past.st == status::no_mapping);
}

TEST_CASE("unmap: iowrites already on the way are dropped, not placed, until acknowledged") {
  tcp_protocol a({}, "a"), b({}, "b");
  std::vector<unsigned char> region(64, 0);
  b.map(region.data(), 64, 0);
  pump(b, a);
  pump(a, b);
  std::vector<unsigned char> src(64, 0xee);
  a.iowrite(src.data(), 64, 0, 1);  // in flight while b unmaps
  CHECK(b.unmap(0) == status::ok);
  pump(a, b);
  CHECK(region[0] == 0);
  CHECK(b.bytes_discarded() == 64);
  CHECK_FALSE(b.closed());
  pump(b, a);  // the IOUNMAP; a answers with IOUNMAP_ACK
  std::vector<event> ev;
  a.take_events(ev);
  CHECK(ev.back().kind == event_kind::peer_iounmap);
  pump(a, b);
  CHECK_FALSE(b.closed());
  CHECK(a.iowrite(src.data(), 1, 0, 2).st == status::no_mapping);
}

TEST_CASE("unmap mid-payload: the rest of an iowrite being placed is dropped, not written") {
  // Found by the tcp_frames fuzzer: the header had been read, half the
  // payload placed, when the application took its memory back.
  tcp_params p;
  tcp_protocol rx(p, "10.0.0.9:4242");
  std::vector<unsigned char> region(4096, 0);
  rx.map(region.data(), region.size(), 0x1000);
  feed(rx, hello() + bytes_of(make(frame_kind::iowrite, 16, 0x1000)) +
               std::vector<unsigned char>(8, 0xab));
  CHECK(region[7] == 0xab);  // the first half, placed while the map stood
  CHECK(rx.unmap(0x1000) == status::ok);
  std::fill(region.begin(), region.end(), 0);  // the application's again
  feed(rx, std::vector<unsigned char>(8, 0xcd));
  CHECK(std::count(region.begin(), region.end(), 0) == 4096);
  CHECK(rx.bytes_discarded() == 8);
  CHECK_FALSE(rx.closed());
}

TEST_CASE("a map written once ends with its last byte on both sides, with no unmap round") {
  tcp_protocol a({}, "a"), b({}, "b");
  std::vector<unsigned char> region(64, 0);
  REQUIRE(b.map(region.data(), 64, 0, true).st == status::ok);
  pump(b, a);
  pump(a, b);
  std::vector<unsigned char> src(64, 0xee);
  CHECK(a.iowrite(src.data(), 40, 0, 1).bytes == 40);
  CHECK(a.iowrite(src.data(), 8, 48, 2).st == status::invalid);  // not where the last ended
  CHECK(a.iowrite(src.data() + 40, 24, 40, 3).bytes == 24);
  CHECK(a.iowrite(src.data(), 1, 0, 4).st == status::no_mapping);  // gone at the writer
  pump(a, b);
  CHECK(std::count(region.begin(), region.end(), 0xee) == 64);
  CHECK(b.unmap(0) == status::ok);
  CHECK_FALSE(b.wants_write());  // no IOUNMAP: the writer let go already
  CHECK_FALSE(b.closed());
  CHECK_FALSE(a.closed());
}

TEST_CASE("a map written once and not all written: unmap says so and withdraws it") {
  tcp_protocol a({}, "a"), b({}, "b");
  std::vector<unsigned char> region(64, 0);
  b.map(region.data(), 64, 0, true);
  pump(b, a);
  pump(a, b);
  std::vector<unsigned char> src(64, 0xee);
  a.iowrite(src.data(), 32, 0, 1);
  pump(a, b);
  CHECK(b.unmap(0) == status::incomplete);
  CHECK(b.wants_write());  // the IOUNMAP
  pump(b, a);
  pump(a, b);  // its acknowledgement
  CHECK_FALSE(a.closed());
  CHECK_FALSE(b.closed());
  CHECK(a.iowrite(src.data(), 1, 32, 2).st == status::no_mapping);
}

TEST_CASE("a peer that writes a map to be written once out of order, or twice, is cut off") {
  auto payload = [](std::size_t n) { return std::vector<unsigned char>(n, 0xab); };
  for (bool twice : {false, true}) {
    tcp_params p;
    tcp_protocol rx(p, "10.0.0.9:4242");
    std::vector<unsigned char> region(4096, 0);
    rx.map(region.data(), region.size(), 0x1000, true);
    auto first = twice ? bytes_of(make(frame_kind::iowrite, 4096, 0x1000)) + payload(4096)
                       : std::vector<unsigned char>{};
    feed(rx, hello() + first + bytes_of(make(frame_kind::iowrite, 16, 0x1010)) + payload(16));
    if (twice) {
      CHECK(rx.reason() ==
            "peer 10.0.0.9:4242: frame 3 (IOWRITE offset 0x1010 length 16): a "
            "map to be written once, written at offset 16 after 4096 bytes");
    } else {
      CHECK(rx.reason() ==
            "peer 10.0.0.9:4242: frame 2 (IOWRITE offset 0x1010 length 16): a "
            "map to be written once, written at offset 16 after 0 bytes");
      CHECK(std::count(region.begin(), region.end(), 0) == 4096);
    }
  }
  // IOMAP may carry map_once, and no other flag.
  auto flagged = bytes_of(make(frame_kind::iomap, 0, 0x8000, 64));
  flagged[1] = 2;
  CHECK(after(hello() + flagged) ==
        "peer 10.0.0.9:4242: frame 2 (IOMAP offset 0x8000 length 0): flags or reserved bits set");
  flagged[1] = map_once;
  CHECK(after(hello() + flagged).empty());
}

TEST_CASE("shutdown each way, then a clean close") {
  tcp_protocol a({}, "a"), b({}, "b");
  a.send("x", 1);
  a.detach();
  a.shutdown(shutdown_how::write);
  pump(a, b);
  char c;
  CHECK(b.recv(&c, 1).bytes == 1);
  CHECK(b.recv(&c, 1).st == status::eof);
  CHECK(a.send("y", 1).st == status::shut_down);
  CHECK(b.send("z", 1).bytes == 1);  // the other way still open
  b.detach();
  b.shutdown(shutdown_how::write);
  pump(b, a);
  CHECK(a.recv(&c, 1).bytes == 1);
  CHECK(a.closed());
  CHECK_FALSE(a.failed());
  CHECK(b.closed());
  CHECK(a.reason() == "shut down");
}

TEST_CASE("the receive ring pushes back: nothing is read while it is full") {
  tcp_params small;
  small.recv_ring = 16;
  tcp_protocol a({}, "a"), b(small, "b");
  std::vector<unsigned char> data(40, 1);
  a.send(data.data(), data.size());
  a.detach();
  pump(a, b);
  CHECK(a.wants_write());  // the rest waits for b's reader
  CHECK(b.read_target().second == 0);
  unsigned char out[40];
  CHECK(b.recv(out, 40).bytes == 16);
  pump(a, b);
  CHECK(b.recv(out, 40).bytes == 16);
}

TEST_CASE("a send that the socket cannot take is copied, up to send_buffer") {
  tcp_params p;
  p.send_buffer = 100;
  tcp_protocol a(p, "a");
  std::vector<unsigned char> data(250, 3);
  auto r = a.send(data.data(), data.size());
  CHECK(r.bytes == 100);
  CHECK(r.st == status::would_block);
  a.detach();
  data.assign(250, 0);  // the caller's buffer is free
  iovec iov[8];
  std::size_t n = a.write_iov(iov, 8);
  REQUIRE(n == 3);  // HELLO, DATA header, payload
  CHECK(static_cast<unsigned char*>(iov[2].iov_base)[99] == 3);
}

TEST_CASE("copied sends join one DATA frame until it is written or full") {
  tcp_params p;
  p.send_buffer = 256 * 1024;
  tcp_protocol a(p, "a"), b(p, "b");
  pump(a, b);  // the HELLO
  std::vector<unsigned char> sent;
  for (int i = 0; i < 1000; ++i) {
    unsigned char msg[40];
    for (std::size_t k = 0; k < sizeof msg; ++k)
      msg[k] = static_cast<unsigned char>(i + k);
    REQUIRE(a.send_copy(msg, sizeof msg).st == status::ok);
    sent.insert(sent.end(), msg, msg + sizeof msg);
  }
  iovec iov[8];
  REQUIRE(a.write_iov(iov, 8) == 2);  // one header, one payload of 40 000 bytes
  CHECK(iov[1].iov_len == sent.size());
  // Once its first byte is written, a frame is closed to newcomers.
  std::vector<unsigned char> wire{*static_cast<unsigned char*>(iov[0].iov_base)};
  a.on_written(1);
  unsigned char tail[3] = {7, 8, 9};
  CHECK(a.send_copy(tail, sizeof tail).bytes == sizeof tail);
  sent.insert(sent.end(), tail, tail + sizeof tail);
  CHECK(a.write_iov(iov, 8) == 4);
  // A frame holds at most coalesced_frame bytes; the rest opens another.
  std::vector<unsigned char> big(tcp_protocol::coalesced_frame - 2, 5);
  CHECK(a.send_copy(big.data(), big.size()).bytes == big.size());
  sent.insert(sent.end(), big.begin(), big.end());
  REQUIRE(a.write_iov(iov, 8) == 6);
  CHECK(iov[3].iov_len == tcp_protocol::coalesced_frame);
  CHECK(iov[5].iov_len == 1);
  // The receiver reads it all as one stream, in order.
  for (std::size_t i = 0; i < 6; ++i)
    wire.insert(wire.end(), static_cast<unsigned char*>(iov[i].iov_base),
                static_cast<unsigned char*>(iov[i].iov_base) + iov[i].iov_len);
  std::vector<unsigned char> out(sent.size() + 10);
  std::size_t read = 0, fed = 0;
  while (fed < wire.size() || read < sent.size()) {
    std::size_t k = std::min<std::size_t>(wire.size() - fed, 32 * 1024);
    feed(b, {wire.begin() + static_cast<std::ptrdiff_t>(fed),
             wire.begin() + static_cast<std::ptrdiff_t>(fed + k)});
    fed += k;
    auto r = b.recv(out.data() + read, out.size() - read);
    REQUIRE((r.bytes > 0 || fed < wire.size()));
    read += r.bytes;
  }
  out.resize(read);
  CHECK(out == sent);
  CHECK(b.reason().empty());
}

TEST_CASE("copied sends are bounded by send_buffer, and free the caller's buffer") {
  tcp_params p;
  p.send_buffer = 1000;
  tcp_protocol a(p, "a");
  std::vector<unsigned char> data(600, 1);
  CHECK(a.send_copy(data.data(), data.size()).st == status::ok);
  auto r = a.send_copy(data.data(), data.size());
  CHECK(r.bytes == 400);
  CHECK(r.st == status::would_block);
  data.assign(600, 0);
  iovec iov[8];
  REQUIRE(a.write_iov(iov, 8) == 3);  // HELLO, then one DATA frame
  CHECK(iov[2].iov_len == 1000);
  CHECK(static_cast<unsigned char*>(iov[2].iov_base)[999] == 1);
  // Written, the room comes back and the sender hears it may go on.
  std::size_t all = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len;
  a.on_written(all);
  std::vector<event> ev;
  a.take_events(ev);
  REQUIRE(!ev.empty());
  CHECK(ev.back().kind == event_kind::writable);
}

TEST_CASE("hostile frames close the connection, naming peer and frame") {
  auto h = hello();
  CHECK(after(bytes_of(make(frame_kind::data, 4))) ==
        "peer 10.0.0.9:4242: frame 1 (DATA offset 0x0 length 4): not a riomesh tcp peer (no "
        "HELLO)");
  CHECK(after(h + bytes_of(make(static_cast<frame_kind>(0x42)))) ==
        "peer 10.0.0.9:4242: frame 2 (kind 0x42 length 0): unknown frame kind");
  CHECK(after(h + bytes_of(make(frame_kind::data, (1 << 20) + 1))) ==
        "peer 10.0.0.9:4242: frame 2 (DATA offset 0x0 length 1048577): payload longer than "
        "the 1048576-byte limit");
  CHECK(after(h + bytes_of(make(frame_kind::iowrite, 16, 0x1ff8))) ==
        "peer 10.0.0.9:4242: frame 2 (IOWRITE offset 0x1ff8 length 16): placement outside "
        "every mapped region");
  CHECK(after(h + bytes_of(make(frame_kind::iowrite, 16, 0xfffffffffffffff8ull))) ==
        "peer 10.0.0.9:4242: frame 2 (IOWRITE offset 0xfffffffffffffff8 length 16): placement "
        "wraps past the end of the address space");
  CHECK(after(h + bytes_of(make(frame_kind::iowrite, 16, 0x0))) ==
        "peer 10.0.0.9:4242: frame 2 (IOWRITE offset 0x0 length 16): placement outside every "
        "mapped region");
  CHECK(after(h + bytes_of(make(frame_kind::iounmap, 0, 0x5000))) ==
        "peer 10.0.0.9:4242: frame 2 (IOUNMAP offset 0x5000 length 0): unmap of a map never "
        "announced");
  CHECK(after(h + bytes_of(make(frame_kind::shutdown)) + bytes_of(make(frame_kind::data, 1))) ==
        "peer 10.0.0.9:4242: frame 3 (DATA offset 0x0 length 1): payload after the peer's "
        "SHUTDOWN");
  CHECK(after(h + bytes_of(make(frame_kind::keepalive, 8))) ==
        "peer 10.0.0.9:4242: frame 2 (KEEPALIVE offset 0x0 length 8): this kind carries no "
        "payload");
  auto flagged = bytes_of(make(frame_kind::keepalive));
  flagged[1] = 1;
  CHECK(after(h + flagged) ==
        "peer 10.0.0.9:4242: frame 2 (KEEPALIVE offset 0x0 length 0): flags or reserved bits set");
  CHECK(after(h + bytes_of(make(frame_kind::iomap, 0, 10, 0))) ==
        "peer 10.0.0.9:4242: frame 2 (IOMAP offset 0xa length 0): map of length 0 at that offset");
  CHECK(after(h + h) == "peer 10.0.0.9:4242: frame 2 (HELLO offset 0x3 length 0): a second HELLO");
}

TEST_CASE("a placement inside the map is written there, and nothing around it") {
  std::vector<unsigned char> map(4096, 0);
  std::vector<unsigned char> payload(16, 0xab);
  CHECK(after(hello() + bytes_of(make(frame_kind::iowrite, 16, 0x1ff0)) + payload, &map) == "");
  CHECK(map[4095] == 0xab);
  CHECK(map[4079] == 0);
}

TEST_CASE("a frame cut short by end of stream") {
  tcp_protocol rx({}, "p");
  feed(rx, hello() + std::vector<unsigned char>(10, 0));
  rx.on_eof();
  CHECK(rx.reason() == "peer p: frame 2 truncated by end of stream (10 of 24 header bytes)");
  tcp_protocol ry({}, "p");
  feed(ry, hello() + bytes_of(make(frame_kind::data, 100)) + std::vector<unsigned char>(30, 1));
  ry.on_eof();
  CHECK(ry.reason() == "peer p: frame 2 truncated by end of stream (30 of 100 payload bytes)");
  tcp_protocol rz({}, "p");
  feed(rz, hello());
  rz.on_eof();
  CHECK(rz.reason() == "peer p closed the connection without shutting down");
}

TEST_CASE("timers: keepalive when quiet, failure when the peer is silent too long") {
  using namespace std::chrono_literals;
  tcp_params p;
  p.keepalive = 1s;
  p.peer_timeout = 5s;
  tcp_protocol a(p, "10.1.1.1:7"), b({}, "b");
  pump(a, b);  // the HELLO
  auto t0 = std::chrono::steady_clock::time_point{} + 100s;
  a.tick(t0);
  CHECK_FALSE(a.wants_write());
  a.tick(t0 + 1500ms);
  CHECK(a.wants_write());  // a KEEPALIVE
  pump(a, b);
  CHECK_FALSE(b.closed());  // it is a valid frame
  pump(b, a);               // b's HELLO: a hears from b
  a.tick(t0 + 3s);
  a.tick(t0 + 7s);
  CHECK_FALSE(a.closed());  // heard at 3 s: not yet 5 s of silence
  a.tick(t0 + 8500ms);
  CHECK(a.closed());
  CHECK(a.reason() == "peer 10.1.1.1:7 silent for 5500 ms");
}

TEST_CASE("tcp parameters come from the node's channel settings") {
  riomesh::config::channel_settings c;
  c.recv_buffer = 1 << 20;
  c.send_buffer = 4096;
  c.max_pending = 7;
  auto p = tcp_params::from(c);
  CHECK(p.recv_ring == 1u << 20);
  CHECK(p.send_buffer == 4096);
  CHECK(p.max_pending == 7);
  CHECK(p.peer_timeout == c.peer_timeout);
}

TEST_CASE("a HELLO's flags, reserved bits and map bound are checked") {
  auto with = [](std::uint8_t flags, std::uint16_t reserved, std::uint32_t maps) {
    auto f = make(frame_kind::hello, maps, protocol_version, hello_magic);
    f.flags = flags;
    f.reserved = reserved;
    return bytes_of(f);
  };
  CHECK(after(with(1, 0, 16)) ==
        "peer 10.0.0.9:4242: frame 1 (HELLO offset 0x3 length 16): flags or reserved bits set");
  CHECK(after(with(0, 7, 16)) ==
        "peer 10.0.0.9:4242: frame 1 (HELLO offset 0x3 length 16): flags or reserved bits set");
  CHECK(after(with(0, 0, max_maps + 1)) ==
        "peer 10.0.0.9:4242: frame 1 (HELLO offset 0x3 length 32513): accepts 32513 maps, more "
        "than the 32512 the protocol allows");
  CHECK(after(with(0, 0, 16)).empty());
  auto v1 = make(frame_kind::hello, 0, 1, hello_magic);
  CHECK(after(bytes_of(v1)) ==
        "peer 10.0.0.9:4242: frame 1 (HELLO offset 0x1 length 0): protocol version 1; only "
        "version 3 is spoken");
}

TEST_CASE("a gated protocol holds the peer's maps and placements until authorized") {
  tcp_params p;
  p.gated = true;
  for (auto kind :
       {frame_kind::iomap, frame_kind::iowrite, frame_kind::iounmap, frame_kind::iounmap_ack}) {
    CAPTURE(static_cast<int>(kind));
    tcp_protocol rx(p, "10.0.0.9:4242");
    auto early = make(kind, kind == frame_kind::iowrite ? 8 : 0, 0x1000,
                      kind == frame_kind::iomap ? 4096 : 0);
    const char text[] = "hello";
    feed(rx, hello() + bytes_of(make(frame_kind::data, sizeof text)) +
                 std::vector<unsigned char>(text, text + sizeof text) + bytes_of(early) +
                 bytes_of(make(frame_kind::keepalive)));
    // The stream bytes before it are there; nothing after it was read.
    CHECK(rx.peek().second == sizeof text);
    CHECK(rx.read_target().second == 0);
    CHECK(rx.frames_received() == 3);
    CHECK_FALSE(rx.closed());
    CHECK(rx.held_frame() ==
          "frame 3 (" + describe(early) + ") came before the session was authenticated");
  }
  // Authorized, the held frame is judged like any other.
  tcp_protocol rx(p, "p");
  feed(rx, hello() + bytes_of(make(frame_kind::iomap, 0, 0x1000, 4096)));
  REQUIRE_FALSE(rx.held_frame().empty());
  rx.authorize();
  CHECK(rx.held_frame().empty());
  std::vector<event> ev;
  rx.take_events(ev);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].kind == event_kind::peer_iomap);
  CHECK(rx.read_target().second == header_size);  // reading again
  // Not gated (a raw socket): maps from the start.
  tcp_protocol open({}, "p");
  feed(open, hello() + bytes_of(make(frame_kind::iomap, 0, 0x1000, 4096)));
  CHECK(open.held_frame().empty());
  CHECK_FALSE(open.closed());
}

TEST_CASE("peer maps are bounded by channel.iomap_size, and found by offset quickly") {
  tcp_params p;
  p.max_peer_maps = 50000;
  tcp_protocol rx(p, "p");
  std::vector<unsigned char> bytes = hello();
  for (std::uint64_t i = 0; i < 50000; ++i) {
    auto f = bytes_of(make(frame_kind::iomap, 0, i * 8192, 4096));
    bytes.insert(bytes.end(), f.begin(), f.end());
  }
  auto t0 = std::chrono::steady_clock::now();
  feed(rx, bytes);
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK_FALSE(rx.closed());
  // Each map checked against every earlier one: over 1e9 comparisons.
  CHECK(took < std::chrono::milliseconds(400));
  feed(rx, bytes_of(make(frame_kind::iomap, 0, 50000 * 8192ull, 4096)));
  CHECK(rx.reason() ==
        "peer p: frame 50002 (IOMAP offset 0x186a0000 length 0): more than the 50000 maps this "
        "node accepts (channel.iomap_size)");
  tcp_protocol ry({}, "p");
  feed(ry, hello() + bytes_of(make(frame_kind::iomap, 0, 0x1000, 4096)) +
               bytes_of(make(frame_kind::iomap, 0, 0x1fff, 1)));
  CHECK(ry.reason() ==
        "peer p: frame 3 (IOMAP offset 0x1fff length 0): map overlaps an earlier one");
}

TEST_CASE("our maps stop at the bound the peer's HELLO gave") {
  tcp_params two;
  two.max_peer_maps = 2;
  tcp_protocol a({}, "a"), b(two, "b");
  pump(b, a);  // b's HELLO: it accepts 2 maps from a
  std::vector<unsigned char> r(300);
  CHECK(a.map(r.data(), 100, 0).st == status::ok);
  CHECK(a.map(r.data() + 100, 100, 100).st == status::ok);
  CHECK(a.map(r.data() + 200, 100, 200).st == status::no_space);
  pump(a, b);
  CHECK_FALSE(b.closed());
}

TEST_CASE("a peer that unmaps without reading our acknowledgements is cut off") {
  tcp_params p;
  p.max_peer_maps = 4;
  tcp_protocol rx(p, "p");
  std::vector<unsigned char> bytes = hello();
  for (int i = 0; i < 100; ++i)
    bytes = bytes + bytes_of(make(frame_kind::iomap, 0, 0x1000, 4096)) +
            bytes_of(make(frame_kind::iounmap, 0, 0x1000));
  feed(rx, bytes);  // nobody drains rx's output
  CHECK(rx.reason() == "peer p: it does not read: 72 acknowledgements wait for it");
}
