// Connection actors over real channels (channel_pair.hpp), driven by the progress loop,
// inside a CAF actor system: setup, messages with placed buffers,
// refusal, and back-pressure before setup.
#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_actor.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/progress/progress_loop.hpp>
#include <riomesh/errc.hpp>
#include "channel_pair.hpp"

#include <riomesh/channels/tcp/tcp_channel.hpp>
#include <riomesh/channels/tcp/tcp_socket.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>

using namespace riomesh;
using namespace riomesh::actors;
using namespace riomesh::channels;
using namespace std::chrono_literals;

namespace {

struct fixture {
  // The loop outlives the system: connection actors unwatch it as they go.
  progress_loop loop;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fixture() {
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

connection_params params(const std::string& name, const std::string& secret) {
  connection_params p;
  p.node_name = name;
  p.creds.secret = secret;
  p.arena_size = 1 << 20;
  p.releases.delay = std::chrono::microseconds(0);
  return p;
}

}  // namespace

TEST_CASE_FIXTURE(fixture, "connection actors: setup, then messages with placed buffers") {
  auto [ca, cb] = test::channel_pair();
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  auto a = spawn_connection(*sys, ca, loop, params("node-a", "k"), owner_a);
  auto b = spawn_connection(*sys, cb, loop, params("node-b", "k"), owner_b);
  std::string peer;
  owner_a->receive(
      [&](connected_atom, const std::string& name, bool authenticated, bool, std::uint64_t) {
        peer = name;
        CHECK(authenticated);
      },
      caf::after(10s) >> [] { FAIL("no connection"); });
  CHECK(peer == "node-b");
  owner_b->receive([&](connected_atom, const std::string&, bool, bool, std::uint64_t) {},
                   caf::after(10s) >> [] { FAIL("no connection"); });
  // Inbound waits until the owner keeps the connection; then comes straight.
  owner_b->send(b, route_atom::value, caf::actor{owner_b});

  const int count = 20;
  for (int i = 0; i < count; ++i) {
    outbound_message m;
    m.env.request_id = static_cast<std::uint64_t>(i);
    m.env.body = {static_cast<unsigned char>(i)};
    auto payload = buffer::heap(10000 + static_cast<std::size_t>(i));
    for (std::size_t k = 0; k < payload.size(); ++k)
      payload[k] = static_cast<unsigned char>(i + k);
    m.placed = {payload};
    owner_a->request(a, 5s, outbound_atom::value, std::move(m))
        .receive([](std::uint64_t) {}, [&](caf::error& e) { FAIL(sys->render(e)); });
  }
  for (int i = 0; i < count; ++i) {
    owner_b->receive(
        [&](inbound_atom, const std::string& from, inbound_message& m) {
          CHECK(from == "node-a");
          CHECK(m.env.request_id == static_cast<std::uint64_t>(i));
          REQUIRE(m.placed.size() == 1);
          const auto& p = m.placed[0];
          CHECK(p.size() == 10000 + static_cast<std::size_t>(i));
          bool same = true;
          for (std::size_t k = 0; k < p.size(); ++k)
            same = same && p[k] == static_cast<unsigned char>(i + k);
          CHECK(same);
          CHECK(p.where() == buffer::origin::arena);
        },
        caf::after(10s) >> [] { FAIL("message lost"); });
  }
  owner_a->request(a, 5s, stats_atom::value)
      .receive(
          [&](const connection_core::counters& c) {
            CHECK(c.messages_out == count);
            CHECK(c.bytes_placed_out == count * 10000 + count * (count - 1) / 2);
            CHECK(c.inline_bytes_out == count);  // one body byte each: nothing else copied
          },
          [&](caf::error& e) { FAIL(sys->render(e)); });
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "connection actors: a wrong secret closes both, with the reason") {
  auto [ca, cb] = test::channel_pair();
  caf::scoped_actor owner_a{*sys}, owner_b{*sys};
  auto a = spawn_connection(*sys, ca, loop, params("node-a", "right"), owner_a);
  auto b = spawn_connection(*sys, cb, loop, params("node-b", "wrong"), owner_b);
  for (auto* owner : {&owner_a, &owner_b}) {
    std::string reason;
    (*owner)->receive([&](closed_atom, const std::string& why, bool) { reason = why; },
                      caf::after(10s) >> [] { FAIL("not closed"); });
    CHECK(reason.find("wrong cluster secret") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(fixture, "connection actors: before setup, sends queue within max_pending") {
  auto [ca, cb] = test::channel_pair();  // nobody answers on cb: setup never finishes
  caf::scoped_actor owner{*sys};
  auto p = params("node-a", "k");
  p.max_pending = 2;
  auto a = spawn_connection(*sys, ca, loop, p, owner);
  int accepted = 0;
  caf::error refusal;
  for (int i = 0; i < 3; ++i)
    owner->request(a, 5s, outbound_atom::value, outbound_message{})
        .receive([&](std::uint64_t) { ++accepted; }, [&](caf::error& e) { refusal = e; });
  CHECK(accepted == 2);
  CHECK(is(refusal, errc::congested));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(fixture, "connection actors: at the setup limit the peer is told in band") {
  // A peer that never answers the greeting: given up on, it must read a
  // clean end, not a failure. An rsocket client hears of nothing else: a
  // queue pair torn down without a word leaves its next write hanging.
  auto [ca, cb] = test::channel_pair();
  caf::scoped_actor owner{*sys};
  auto p = params("node-a", "k");
  p.setup_limit = std::chrono::milliseconds(300);
  p.tick = std::chrono::milliseconds(50);
  auto a = spawn_connection(*sys, ca, loop, p, owner);
  std::string reason;
  owner->receive([&](closed_atom, const std::string& why, bool) { reason = why; },
                 caf::after(10s) >> [] { FAIL("not closed at the setup limit"); });
  CHECK(reason.find("no session within 300 ms") != std::string::npos);
  auto end = std::chrono::steady_clock::now() + 5s;
  status ended = status::would_block;
  char chunk[256];
  while (std::chrono::steady_clock::now() < end) {
    cb->progress();
    auto r = cb->recv(chunk, sizeof chunk);
    if (r.st != status::ok && r.st != status::would_block) {
      ended = r.st;
      break;
    }
  }
  CHECK_MESSAGE(ended == status::eof, "the peer saw ", std::string(to_string(ended)), ": ",
                cb->reason());
}

TEST_CASE_FIXTURE(fixture, "connection actors: a silent peer is lost within peer_timeout + 1 s") {
  using namespace riomesh::channels::tcp;
  // Our side times out after 400 ms of silence; the peer, set up by hand
  // and then never driven again, sends nothing more (its kernel still
  // acknowledges our bytes: only the protocol can tell it is gone).
  tcp_params quick;
  quick.keepalive = std::chrono::milliseconds(100);
  quick.peer_timeout = std::chrono::milliseconds(400);
  auto l = listen_on({"127.0.0.1", 0});
  REQUIRE(l.fd >= 0);
  std::string error;
  std::shared_ptr<channel> mine = tcp_channel::connect(
      {"127.0.0.1", static_cast<std::uint16_t>(local_port(l.fd))}, quick, {}, error);
  REQUIRE(static_cast<bool>(mine));
  pollfd pfd{l.fd, POLLIN, 0};
  REQUIRE(::poll(&pfd, 1, 5000) == 1);
  auto s = accept_from(l.fd, {});
  ::close(l.fd);
  tcp_channel theirs(s.fd, s.peer, tcp_params{});
  caf::scoped_actor owner{*sys};
  auto p = params("node-a", "k");
  p.tick = std::chrono::milliseconds(50);
  auto a = spawn_connection(*sys, mine, loop, p, owner);
  session_setup setup(theirs, handshake("node-b", "k", random_nonce()), {1 << 20, 1 << 16, 32},
                      false);
  auto end = std::chrono::steady_clock::now() + 10s;
  while (!setup.established() && !setup.failed() && std::chrono::steady_clock::now() < end) {
    theirs.progress();
    setup.pump();
  }
  REQUIRE(setup.established());
  owner->receive([](connected_atom, const std::string&, bool, bool, std::uint64_t) {},
                 caf::after(10s) >> [] { FAIL("no connection"); });
  auto silent_since = std::chrono::steady_clock::now();
  std::string reason;
  bool stopped = true;
  owner->receive(
      [&](closed_atom, const std::string& why, bool s) {
        reason = why;
        stopped = s;
      },
      caf::after(10s) >> [] { FAIL("the silent peer was never declared lost"); });
  CHECK_FALSE(stopped);
  auto took = std::chrono::steady_clock::now() - silent_since;
  CHECK(reason.find("silent for") != std::string::npos);
  CHECK(took < std::chrono::milliseconds(400 + 1000));
  MESSAGE(
      "declared lost after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                             << " ms: " << reason);
}
