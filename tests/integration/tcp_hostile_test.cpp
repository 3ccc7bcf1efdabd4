// A node serving several tcp connections while raw-socket clients send it
// every kind of malformed frame. Each hostile connection must be closed with
// a reason naming the peer and the frame, nothing outside mapped memory may
// change, and a well-behaved connection must carry on throughout.
#include <riomesh/channels/tcp/tcp_channel.hpp>

#include <drive.hpp>
#include <pattern.hpp>
#include <tcp_frames.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>

using namespace riomesh;
using namespace riomesh::channels;
using namespace riomesh::channels::tcp;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t map_offset = 0x1000;
constexpr std::size_t map_size = 65536, guard = 256;

// What the node keeps per connection: the channel and its guarded map.
struct served {
  std::unique_ptr<tcp_channel> ch;
  std::vector<unsigned char> memory = std::vector<unsigned char>(map_size + 2 * guard, 0xa5);
  bool guards_intact() const {
    auto ok = [](unsigned char c) { return c == 0xa5; };
    return std::all_of(memory.begin(), memory.begin() + guard, ok) &&
           std::all_of(memory.end() - guard, memory.end(), ok);
  }
};

class node {
 public:
  node() {
    auto s = listen_on({"127.0.0.1", 0});
    listener_ = s.fd;
    port = static_cast<std::uint16_t>(local_port(listener_));
  }
  ~node() { ::close(listener_); }

  // One round of the node's progress loop.
  void run_once(int timeout_ms = 20) {
    std::vector<pollfd> fds{{listener_, POLLIN, 0}};
    for (auto& [peer, c] : conns)
      fds.push_back(
          {c.ch->wait_fd(), static_cast<short>(POLLIN | (c.ch->wants_write() ? POLLOUT : 0)), 0});
    ::poll(fds.data(), fds.size(), timeout_ms);
    for (auto s = accept_from(listener_, {}); s.fd >= 0; s = accept_from(listener_, {})) {
      tcp_params p;
      p.max_frame = 1 << 20;
      auto& c = conns[s.peer];
      c.ch = std::make_unique<tcp_channel>(s.fd, s.peer, p);
      c.ch->map(c.memory.data() + guard, map_size, map_offset);
    }
    for (auto it = conns.begin(); it != conns.end();) {
      auto& c = it->second;
      c.ch->progress();
      std::vector<event> ev;
      c.ch->take_events(ev);
      for (auto [p, n] = c.ch->peek(); n > 0; std::tie(p, n) = c.ch->peek()) {
        received[it->first].insert(received[it->first].end(), p, p + n);
        c.ch->consume(n);
      }
      if (c.ch->closed()) {
        closed[it->first] = c.ch->reason();
        intact &= c.guards_intact();
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::uint16_t port = 0;
  std::map<std::string, served> conns;
  std::map<std::string, std::string> closed;  // peer -> reason
  std::map<std::string, std::vector<unsigned char>> received;
  bool intact = true;

 private:
  int listener_ = -1;
};

// Connects a raw socket, writes `bytes`, optionally closes, and lets the node
// run until it has closed that connection; returns the reason it gave.
std::string attack(node& n, const std::vector<unsigned char>& bytes, const std::string& expected,
                   bool close_after = false) {
  auto s = connect_to({"127.0.0.1", n.port}, {});
  REQUIRE(s.fd >= 0);
  sockaddr_storage me{};
  socklen_t len = sizeof me;
  ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&me), &len);
  std::string who = "127.0.0.1:" + std::to_string(local_port(s.fd));
  REQUIRE(::send(s.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(bytes.size()));
  if (close_after)
    ::shutdown(s.fd, SHUT_WR);
  for (int i = 0; i < 500 && !n.closed.count(who); ++i)
    n.run_once();
  ::close(s.fd);
  REQUIRE_MESSAGE(n.closed.count(who), "the node did not close " << who);
  CHECK(n.closed[who] == "peer " + who + ": " + expected);
  return n.closed[who];
}

}  // namespace

TEST_CASE("hostile tcp peers are cut off one by one, the node and its good peer carry on") {
  node n;
  std::string error;
  auto good = tcp_channel::connect({"127.0.0.1", n.port}, {}, {}, error);
  REQUIRE(good);
  test::pattern sent(99);
  std::size_t good_bytes = 0;
  auto good_round = [&] {  // the good peer keeps streaming between attacks
    std::vector<unsigned char> chunk(8192);
    sent.fill(chunk.data(), chunk.size());
    std::size_t off = 0;
    for (int i = 0; i < 200 && off < chunk.size(); ++i) {
      off += good->send(chunk.data() + off, chunk.size() - off).bytes;
      good->progress();
      n.run_once(1);
    }
    REQUIRE(off == chunk.size());
    good_bytes += chunk.size();
  };
  auto h = test::hello();
  auto cat = [](const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
    return test::operator+(a, b);
  };

  good_round();
  attack(n, cat(h, test::bytes_of(test::make(static_cast<frame_kind>(0x99), 0))),
         "frame 2 (kind 0x99 length 0): unknown frame kind");
  good_round();
  attack(n, cat(h, test::bytes_of(test::make(frame_kind::data, (1u << 20) + 1))),
         "frame 2 (DATA offset 0x0 length 1048577): payload longer than the 1048576-byte limit");
  good_round();
  attack(n, cat(h, test::bytes_of(test::make(frame_kind::iowrite, 16, map_offset + map_size - 8))),
         "frame 2 (IOWRITE offset 0x10ff8 length 16): placement outside every mapped region");
  good_round();
  attack(n, cat(h, test::bytes_of(test::make(frame_kind::iowrite, 16, ~0ull - 7))),
         "frame 2 (IOWRITE offset 0xfffffffffffffff8 length 16): placement wraps past the end of "
         "the address space");
  good_round();
  attack(n, cat(h, test::bytes_of(test::make(frame_kind::iounmap, 0, 0x7000))),
         "frame 2 (IOUNMAP offset 0x7000 length 0): unmap of a map never announced");
  good_round();
  auto cut = cat(h, test::bytes_of(test::make(frame_kind::iowrite, 100, map_offset)));
  cut.resize(cut.size() + 40, 0x77);
  attack(n, cut, "frame 2 truncated by end of stream (40 of 100 payload bytes)", true);
  good_round();
  attack(n, std::vector<unsigned char>(24, 0x41),
         "frame 1 (kind 0x41 length 1094795585): not a riomesh tcp peer (no HELLO)");
  good_round();

  // The good connection is still served, and got every byte intact.
  std::vector<unsigned char> expected(good_bytes);
  test::pattern again(99);
  again.fill(expected.data(), expected.size());
  for (int i = 0; i < 200; ++i) {
    good->progress();
    n.run_once(1);
  }
  REQUIRE(n.conns.size() == 1);
  CHECK(n.received[n.conns.begin()->first] == expected);
  CHECK(n.intact);  // guard bytes around every hostile connection's map unchanged
  CHECK(n.closed.size() == 7);
}
