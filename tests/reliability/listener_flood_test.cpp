// Clients that never become nodes hammer a node's listener while an honest
// peer streams to it: they connect and leave, send garbage, fail the
// handshake, or connect and hold the socket open. The node must close each
// (the silent ones within its setup limit), refuse the excess while too
// many are setting up, keep the honest stream intact and flowing, and give
// every descriptor back. tcp: the listener there is a plain socket.
#include "liar.hpp"
#include "refusals.hpp"
#include "resources.hpp"

#include <cluster.hpp>
#include <process.hpp>
#include <tcp_frames.hpp>

#include <riomesh/channels/raw_socket.hpp>

#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

int dial(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void put(int fd, const std::vector<unsigned char>& bytes) {
  (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

// True once the node has closed `fd` (reads end of stream or an error).
bool closed_by_peer(int fd, std::chrono::milliseconds limit) {
  auto deadline = clock_type::now() + limit;
  unsigned char sink[4096];
  while (clock_type::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      auto n = ::recv(fd, sink, sizeof sink, 0);
      if (n <= 0)
        return true;
    }
  }
  return false;
}

// True if the node has closed `fd` by now; reads what it sent meanwhile.
bool gone_now(int fd) {
  unsigned char sink[4096];
  for (;;) {
    auto n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n > 0)
      continue;
    return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
  }
}

}  // namespace

TEST_CASE("flood: clients that never authenticate hammer the listener, the honest stream goes on") {
  if (fabric_under_test() != "tcp")
    return;
  auto settings = node_settings("node-a");
  auto a = start_node(settings);
  auto sink = spawn_sink(a->system());
  a->publish(sink, "sink");
  caf::scoped_actor self{a->system()};
  auto log = "/tmp/riomesh-flood-" + std::to_string(::getpid()) + ".log";
  peer_process honest({"node-b", "stream", "0", "node-a", std::to_string(a->port())}, log);
  REQUIRE(honest.started());
  std::this_thread::sleep_for(300ms);
  auto fds_before = open_descriptors();
  bool intact = false;
  auto before = sink_count(self, sink, intact);

  // 1. 150 clients that speak the channel's first words and then only
  // keepalives, never starting a session: more than the node lets set up at
  // once. And 20 that say nothing at all.
  std::vector<int> talkers, silent;
  std::mutex talkers_lock;
  std::atomic<bool> talking{true};
  // Talking from the first: connecting 150 can take longer than the peer
  // timeout, and a talker gone quiet would be closed as silent.
  std::thread keeper([&] {
    while (talking) {
      {
        std::lock_guard<std::mutex> g(talkers_lock);
        for (int fd : talkers)
          put(fd, bytes_of(make(channels::tcp::frame_kind::keepalive)));
      }
      std::this_thread::sleep_for(100ms);
    }
  });
  for (int i = 0; i < 150; ++i) {
    int fd = dial(a->port());
    REQUIRE(fd >= 0);
    put(fd, hello() + bytes_of(make(channels::tcp::frame_kind::keepalive)));
    std::lock_guard<std::mutex> g(talkers_lock);
    talkers.push_back(fd);
  }
  for (int i = 0; i < 20; ++i)
    silent.push_back(dial(a->port()));
  // The node never has more than 64 in setup: it closed the rest at once.
  std::this_thread::sleep_for(300ms);
  int open = 0;
  {
    std::lock_guard<std::mutex> g(talkers_lock);
    for (int fd : talkers)
      open += !gone_now(fd);
  }
  MESSAGE(open, " of ", talkers.size(), " talking clients still open");
  CHECK(open <= 64);
  // 2. Meanwhile, for 3 s: connect-and-leave, garbage, and handshakes with
  // a wrong secret, from two threads.
  std::atomic<int> wrong_secret_tries{0}, rounds{0};
  // Refused for its secret, or closed first to make room under the setup
  // cap (64 at once) for newer connections.
  refusals refused(std::vector<std::pair<std::string, std::string>>{
      {"wrong cluster secret", "for the wrong secret"},
      {"the peer ended the connection during setup", "closed for newer connections"}});
  auto hammer = [&](unsigned seed) {
    std::mt19937 rng(seed);
    auto wrong = node_settings("intruder", {}, "not-the-cluster-secret");
    for (auto end = clock_type::now() + 3s; clock_type::now() < end; ++rounds) {
      switch (rng() % 3) {
        case 0:
          if (int fd = dial(a->port()); fd >= 0)
            ::close(fd);
          break;
        case 1:
          if (int fd = dial(a->port()); fd >= 0) {
            std::vector<unsigned char> junk(1 + rng() % 512);
            for (auto& c : junk)
              c = static_cast<unsigned char>(rng());
            put(fd, junk);
            closed_by_peer(fd, 3s);
            ::close(fd);
          }
          break;
        default:
          ++wrong_secret_tries;
          try {
            liar l("intruder", {"127.0.0.1", a->port()}, wrong);
            refused.add("");  // accepted: a failure
          } catch (const std::exception& e) {
            refused.add(e.what());
          }
      }
    }
  };
  std::thread h1(hammer, 1), h2(hammer, 2);
  std::this_thread::sleep_for(3s);
  h1.join();
  h2.join();
  MESSAGE(rounds.load(), " hammer rounds; ", wrong_secret_tries.load(),
          " handshakes with a wrong secret: ", refused.summary());
  // Every other one is closed too: the talkers at the setup limit (2 s
  // here), though they kept talking; the silent ones at the peer timeout.
  auto deadline = clock_type::now() + 5s;
  std::size_t closed = 0;
  std::vector<int> all = talkers;
  all.insert(all.end(), silent.begin(), silent.end());
  for (int fd : all)
    closed += closed_by_peer(fd, std::chrono::duration_cast<std::chrono::milliseconds>(std::max(
                                     deadline - clock_type::now(), clock_type::duration{})));
  talking = false;
  keeper.join();
  for (int fd : all)
    ::close(fd);
  CHECK(closed == all.size());
  // Each one refused, and for a reason it may be refused for.
  CHECK(wrong_secret_tries.load() > 0);
  CHECK(refused.count() == wrong_secret_tries.load());
  CHECK_MESSAGE(refused.unexpected().empty(), refused.unexpected());

  // The honest peer kept streaming, intact.
  auto after = sink_count(self, sink, intact);
  MESSAGE("honest blobs during the flood: ", after - before);
  CHECK(intact);
  CHECK(after > before);
  auto calc = a->remote_actor<calc_actor>("node-b", "calc");
  REQUIRE_MESSAGE(calc, error_text(*a, calc));
  // And every descriptor the flood took came back.
  deadline = clock_type::now() + 10s;
  while (open_descriptors() > fds_before && clock_type::now() < deadline)
    std::this_thread::sleep_for(50ms);
  CHECK(open_descriptors() == fds_before);
  auto status = honest.stop();
  CHECK_MESSAGE(status == 0, honest.log());
  std::remove(log.c_str());
}
