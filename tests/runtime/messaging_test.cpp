// Actors on two and three runtimes in one process: typed request /
// response, buffers of every size class placed or inline, one-way streams
// in order, errors that say what went wrong, and the copy counters.
#include "cluster.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

TEST_CASE_FIXTURE(two_nodes, "runtime: typed request and response across nodes") {
  b->publish(spawn_calc(b->system()), "calc");
  auto c = a->remote_actor<calc_actor>("node-b", "calc");
  REQUIRE_MESSAGE(c, error_text(*a, c));
  caf::scoped_actor self{a->system()};
  int sum = 0;
  self->request(*c, 5s, add_atom::value, 3, 4)
      .receive([&](int r) { sum = r; }, [&](caf::error& e) { FAIL(a->system().render(e)); });
  CHECK(sum == 7);

  // The untyped view of the same actor works too; a wrong typed view does not.
  CHECK(a->remote_actor("node-b", "calc"));
  auto wrong = a->remote_actor<caf::typed_actor<caf::reacts_to<int>>>("node-b", "calc");
  REQUIRE_FALSE(wrong);
  CHECK(is(wrong.error(), errc::interface_mismatch));
}

TEST_CASE_FIXTURE(two_nodes, "runtime: buffers of every size arrive intact, placed or inline") {
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE_MESSAGE(s, error_text(*a, s));
  auto thr = a->settings().channel.eager_threshold;
  for (std::size_t size :
       {std::size_t{0}, std::size_t{1}, thr - 1, thr, thr + 1, std::size_t{64} << 20}) {
    CAPTURE(size);
    auto data = a->allocate(size);
    fill(data, size);
    CHECK(sum_at(*a, *s, data) == checksum(data));
  }
  // Buffers come back too: the echo's buffer is placed in a's arena, or
  // (from channel.rendezvous on) fetched into a's pool.
  caf::scoped_actor self{a->system()};
  for (std::size_t size : {std::size_t{200} << 10, std::size_t{4} << 20}) {
    CAPTURE(size);
    auto big = a->allocate(size);
    fill(big, 9);
    self->request(*s, 30s, echo_atom::value, big)
        .receive(
            [&](const buffer& back) {
              CHECK(back.where() == (a->settings().channel.rendezvous == 0 ||
                                             size < a->settings().channel.rendezvous
                                         ? buffer::origin::arena
                                         : buffer::origin::pool));
              CHECK(checksum(back) == checksum(big));
            },
            [&](caf::error& e) { FAIL(a->system().render(e)); });
  }
}

TEST_CASE("runtime: encrypted streams carry every size, a stream of many, both ways, and say so") {
  if (fabric_under_test() != "tcp")
    return;  // rdma places by RDMA write: there is nothing to encrypt it with
  auto sb = node_settings("node-b");
  sb.channel.encrypt = config::encryption::on;  // one side asking is enough
  auto b = start_node(sb);
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}));
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE_MESSAGE(s, error_text(*a, s));
  auto thr = a->settings().channel.eager_threshold;
  for (std::size_t size :
       {std::size_t{1}, thr - 1, thr, std::size_t{300000}, std::size_t{16} << 20}) {
    CAPTURE(size);
    auto data = a->allocate(size);
    fill(data, size);
    CHECK(sum_at(*a, *s, data) == checksum(data));
  }
  // Many at once, more than a read of the socket takes: what TLS reads
  // ahead is served although the socket does not say so.
  caf::scoped_actor self{a->system()};
  std::vector<buffer> sent;
  for (std::uint64_t i = 0; i < 64; ++i) {
    sent.push_back(a->allocate(256 << 10));
    fill(sent.back(), i);
    self->send(*s, blob{i, sent.back()});
  }
  bool intact = false;
  for (auto end = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < end;) {
    if (sink_count(self, *s, intact) == 64)
      break;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(sink_count(self, *s, intact) == 64);
  CHECK(intact);
  auto big = a->allocate(4 << 20);
  fill(big, 9);
  self->request(*s, 30s, echo_atom::value, big)
      .receive([&](const buffer& back) { CHECK(checksum(back) == checksum(big)); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  for (auto* rt : {a.get(), b.get()}) {
    auto st = rt->stats();
    REQUIRE(st.peers.size() == 1);
    CHECK(st.peers[0].second.encrypted == 1);
    CHECK(st.peers[0].second.authenticated == 1);
  }
}

TEST_CASE_FIXTURE(two_placing_nodes, "runtime: pool buffers above the threshold are never copied") {
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  auto thr = a->settings().channel.eager_threshold;
  std::uint64_t sent = 0;
  for (std::size_t size : {thr, thr + 1, std::size_t{1} << 20, std::size_t{8} << 20}) {
    auto data = a->allocate(size);
    fill(data, size);
    CHECK(sum_at(*a, *s, data) == checksum(data));
    sent += size;
  }
  auto sa = a->stats(), sb = b->stats();
  CHECK(sa.node.payload_copied_out == 0);
  CHECK(sb.node.payload_copied_in == 0);
  CHECK(sa.node.bytes_placed_out == sent);
  CHECK(sb.node.bytes_placed_in == sent);
  REQUIRE(sa.peers.size() == 1);
  CHECK(sa.peers[0].first == "node-b");
  CHECK(sa.peers[0].second.bytes_placed_out == sent);
  // On rdma the pool's slab is registered once and every later send hits;
  // tcp registers nothing.
  const auto& conn = sa.peers[0].second;
  if (fabric_under_test() == "rdma") {
    CHECK(conn.registrations == 1);
    CHECK(conn.registration_hits >= 3);
    CHECK(conn.per_write_registrations == 0);
  } else {
    CHECK(conn.registrations + conn.registration_hits + conn.per_write_registrations == 0);
  }
  // The user's own memory (no pool slab) is registered for its write.
  std::vector<unsigned char> mine(256 << 10, 7);
  bool released = false;
  auto wrapped = a->wrap(mine.data(), mine.size(), [&] { released = true; });
  CHECK(wrapped.where() == buffer::origin::user);
  CHECK(sum_at(*a, *s, wrapped) == checksum(wrapped));
  wrapped = buffer{};
  if (fabric_under_test() == "rdma") {
    auto after = a->stats().peers[0].second;
    CHECK(after.registrations == 2);  // the slab, then the user's pages
    CHECK(after.per_write_registrations == 0);
  }
  CHECK(a->stats().node.payload_copied_out == 0);
  // Small ones are copied, and counted as such.
  auto small = a->allocate(100);
  fill(small, 1);
  CHECK(sum_at(*a, *s, small) == checksum(small));
  CHECK(a->stats().node.payload_copied_out == 100);
}

TEST_CASE_FIXTURE(two_nodes, "runtime: a one-way stream arrives complete and in order") {
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  caf::scoped_actor self{a->system()};
  constexpr std::uint64_t n = 2000;
  for (std::uint64_t i = 0; i < n; ++i) {
    // Mixed sizes: inline and placed, interleaved.
    auto data = a->allocate(i % 3 == 0 ? 100 * 1024 : 64);
    fill(data, i);
    self->send(*s, blob{i, data});
  }
  // A send refused as congested comes back; the rest must all arrive.
  std::uint64_t refused = 0;
  for (bool more = true; more;)
    self->receive([&](undelivered_atom, const std::string&, const caf::error&) { ++refused; },
                  caf::after(std::chrono::milliseconds(500)) >> [&] { more = false; });
  std::uint64_t count = 0;
  bool in_order = false;
  for (int tries = 0; tries < 200 && count < n - refused; ++tries) {
    self->request(*s, 10s, count_atom::value)
        .receive(
            [&](std::uint64_t c, bool ordered) {
              count = c;
              in_order = ordered;
            },
            [&](caf::error& e) { FAIL(a->system().render(e)); });
    if (count < n - refused)
      std::this_thread::sleep_for(50ms);
  }
  MESSAGE(refused, " of ", n, " refused as congested");
  CHECK(count == n - refused);
  CHECK(refused < n);
  CHECK(in_order);
}

// The data path's promise, counted where hand-offs happen: a message sent
// is one push onto the link's outbox; a message arriving is one enqueue,
// into its target's mailbox. No actor of the node's own sits in between.
TEST_CASE_FIXTURE(two_nodes, "runtime: one hand-off per message each way") {
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  caf::scoped_actor self{a->system()};
  auto count = [&] {
    std::uint64_t c = 0;
    self->request(*s, 10s, count_atom::value)
        .receive([&](std::uint64_t n, bool) { c = n; },
                 [&](caf::error& e) { FAIL(a->system().render(e)); });
    return c;
  };
  count();  // the sink knows the sender now
  auto a0 = a->stats().node, b0 = b->stats().node;
  constexpr std::uint64_t n = 500;
  for (std::uint64_t i = 0; i < n; ++i) {
    auto data = a->allocate(i % 2 == 0 ? 64 * 1024 : 64);
    fill(data, i);
    self->send(*s, blob{i, data});
  }
  CHECK(count() == n);  // in order behind the stream: all of it has arrived
  auto a1 = a->stats().node, b1 = b->stats().node;
  // a: n messages and one request out; the response in.
  CHECK(a1.connection_enqueues - a0.connection_enqueues == n + 1);
  CHECK(a1.mailbox_enqueues - a0.mailbox_enqueues == 1);
  // b: n messages and one request in, each into the sink's mailbox; the response out.
  CHECK(b1.messages_in - b0.messages_in == n + 1);
  CHECK(b1.mailbox_enqueues - b0.mailbox_enqueues == n + 1);
  CHECK(b1.connection_enqueues - b0.connection_enqueues == 1);
}

TEST_CASE_FIXTURE(two_nodes, "runtime: errors name the node and the name") {
  auto unknown = a->remote_actor("node-z", "sink", 200ms);
  REQUIRE_FALSE(unknown);
  CHECK(is(unknown.error(), errc::unknown_node));
  CHECK(a->system().render(unknown.error()).find("node-z") != std::string::npos);

  auto missing = a->remote_actor("node-b", "nobody");
  REQUIRE_FALSE(missing);
  CHECK(is(missing.error(), errc::not_published));
  CHECK(a->system().render(missing.error()).find("'nobody' on node 'node-b'") != std::string::npos);

  // A message type not added to the config cannot be encoded: the request
  // says so.
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  caf::scoped_actor self{a->system()};
  bool failed = false;
  self->request(*s, 5s, std::vector<std::uint64_t>{1, 2})
      .receive([&](caf::message&) {},
               [&](caf::error& e) {
                 failed = true;
                 CHECK(is(e, errc::encode_failure));
               });
  CHECK(failed);
}

TEST_CASE("runtime: the same node hands the handle over, nothing serialized") {
  auto a = start_node(node_settings("solo"));
  a->publish(spawn_sink(a->system()), "sink");
  auto s = a->remote_actor("solo", "sink");
  REQUIRE(s);
  auto data = a->allocate(1 << 20);
  fill(data, 5);
  caf::scoped_actor self{a->system()};
  self->request(*s, 5s, echo_atom::value, data)
      .receive([&](const buffer& back) { CHECK(back.data() == data.data()); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  CHECK(a->stats().node.messages_out == 0);
}

TEST_CASE("runtime: three nodes, a request crosses two hops and comes back") {
  auto c = start_node(node_settings("node-c"));
  auto b = start_node(node_settings("node-b", {{"node-c", c->port()}}));
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}, {"node-c", c->port()}}));
  c->publish(spawn_sink(c->system()), "sink");
  auto sink_at_c = b->remote_actor("node-c", "sink");
  REQUIRE(sink_at_c);
  // A relay on b: forwards each sum request to c and answers with c's reply.
  auto relay =
      spawn_fn(b->system(), [to = *sink_at_c](caf::event_based_actor* self) -> caf::behavior {
        return {[=](sum_atom, const buffer& data) {
          return self->delegate(to, sum_atom::value, data);
        }};
      });
  b->publish(relay, "relay");
  auto r = a->remote_actor("node-b", "relay");
  REQUIRE(r);
  auto data = a->allocate(2 << 20);
  fill(data, 3);
  CHECK(sum_at(*a, *r, data) == checksum(data));
  // And a talks to c directly as well.
  auto direct = a->remote_actor("node-c", "sink");
  REQUIRE(direct);
  CHECK(sum_at(*a, *direct, data) == checksum(data));
}

TEST_CASE("runtime: a buffer larger than the arena streams through it, or is refused") {
  auto small_arena = [](config::settings s, std::uint64_t max_streamed) {
    s.channel.arena = 4ull << 20;
    s.channel.max_streamed = max_streamed;
    s.channel.rendezvous = 0;  // placed, streamed: not lent
    return s;
  };
  auto b = start_node(small_arena(node_settings("node-b"), 1ull << 30));
  auto a = start_node(small_arena(node_settings("node-a", {{"node-b", b->port()}}), 1ull << 30));
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  // 4 MiB arena: 1 MiB pieces, and an uneven tail.
  auto big = a->allocate((19ull << 20) + 12345);
  fill(big, 19);
  CHECK(sum_at(*a, *s, big) == checksum(big));
  // Back the other way too: b's reply streams into a's arena.
  caf::scoped_actor self{a->system()};
  self->request(*s, 60s, echo_atom::value, big)
      .receive([&](const buffer& back) { CHECK(checksum(back) == checksum(big)); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  // The receiver assembled it: its one copy, counted by the connection.
  auto sb = b->stats();
  CHECK(sb.node.payload_copied_in == 0);  // nothing inline
  REQUIRE(sb.peers.size() == 1);
  CHECK(sb.peers[0].second.streamed_bytes_in == 2 * big.size());  // sum, then echo

  // With streaming off, it is refused as too large, and says why.
  auto c = start_node(small_arena(node_settings("node-c", {{"node-b", b->port()}}), 0));
  auto s2 = c->remote_actor("node-b", "sink");
  REQUIRE(s2);
  auto big2 = c->allocate(8 << 20);
  caf::scoped_actor self2{c->system()};
  bool refused = false;
  self2->request(*s2, 10s, sum_atom::value, big2)
      .receive([](std::uint64_t) {},
               [&](caf::error& e) {
                 refused = true;
                 CHECK_MESSAGE(is(e, errc::too_large), c->system().render(e));
               });
  CHECK(refused);

  // A receiver that streams nothing says so in its session terms: its
  // sender refuses as too_large, naming the receiver's limit, and the
  // connection lives on for what fits.
  auto d = start_node(small_arena(node_settings("node-d"), 0));
  d->publish(spawn_sink(d->system()), "sink");
  auto e = start_node(small_arena(node_settings("node-e", {{"node-d", d->port()}}), 1ull << 30));
  auto s3 = e->remote_actor("node-d", "sink");
  REQUIRE(s3);
  caf::scoped_actor self3{e->system()};
  std::string text;
  self3->request(*s3, 10s, sum_atom::value, e->allocate(8 << 20))
      .receive([](std::uint64_t) { FAIL("streamed past the receiver's limit"); },
               [&](caf::error& err) {
                 CHECK(is(err, errc::too_large));
                 text = e->system().render(err);
               });
  CHECK_MESSAGE(text.find("channel.max_streamed (0 bytes in all, 8 at once; the receiver's)") !=
                    std::string::npos,
                text);
  auto small = e->allocate(1000);
  fill(small, 3);
  CHECK(sum_at(*e, *s3, small) == checksum(small));
  CHECK(d->stats().node.bad_inbound == 0);
}

TEST_CASE("runtime: a 64 MiB serialized message crosses, both ways") {
  // Not a riomesh::buffer: CAF serializes it; a body this large goes
  // placed (streamed through the arena) instead of inline. CAF's
  // serializer takes a while over 64 MiB, on the I/O thread: more, under
  // the sanitizers on a loaded machine, than the suite's 600 ms peer
  // timeout. This case is about the message, not about losing peers.
  auto sb = node_settings("node-b");
  sb.channel.peer_timeout = 5s;
  auto b = start_node(sb);
  auto sa = node_settings("node-a", {{"node-b", b->port()}});
  sa.channel.peer_timeout = 5s;
  auto a = start_node(sa);
  REQUIRE(wait_routed(*a, "node-b"));
  REQUIRE(wait_routed(*b, "node-a"));
  b->publish(spawn_sink(b->system()), "sink");
  auto m = a->remote_actor("node-b", "sink");
  REQUIRE(m);
  const std::size_t size = 64u << 20;
  check_mirrored(*a, *m, size);
  // It was placed (or lent and fetched), not sent inline: decoded from
  // where it landed.
  auto stats = b->stats();
  REQUIRE(stats.peers.size() == 1);
  const auto& c = stats.peers[0].second;
  CHECK(c.bytes_placed_in + c.streamed_bytes_in + c.bytes_fetched >= size);
  CHECK(stats.peers[0].second.inline_bytes_in < 1u << 20);
}

TEST_CASE("runtime: a serialized message too large to carry is refused, saying how to send it") {
  auto sb = node_settings("node-b");
  sb.channel.arena = 4ull << 20;  // the limit, as a does not stream
  auto b = start_node(sb);
  auto sa = node_settings("node-a", {{"node-b", b->port()}});
  sa.channel.max_streamed = 0;
  auto a = start_node(sa);
  b->publish(spawn_sink(b->system()), "sink");
  auto to = a->remote_actor("node-b", "sink");
  REQUIRE(to);
  caf::scoped_actor self{a->system()};
  std::string text;
  self->request(*to, 10s, std::vector<char>(sb.channel.arena + 1))
      .receive([](std::uint64_t) {},
               [&](caf::error& e) {
                 CHECK(is(e, errc::too_large));
                 text = a->system().render(e);
               });
  INFO(text);
  // The message's size (the vector and what CAF adds), then the limits.
  auto at = text.find("a message of ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoull(text.substr(at + 13)) > sb.channel.arena);
  CHECK(text.find("arena (" + std::to_string(sb.channel.arena) + " bytes)") != std::string::npos);
  CHECK(text.find("channel.max_streamed (0 bytes") != std::string::npos);
  CHECK(text.find("riomesh::buffer") != std::string::npos);
}

TEST_CASE_FIXTURE(two_nodes, "runtime: direct placement into memory the receiver exposed") {
  auto region = b->allocate(1 << 20);
  std::fill(region.begin(), region.end(), 0);
  // b's actor reads the region when told: by then the data is there. It
  // also tells where the region is, as an application would: its answer
  // follows b's map on the connection, so a knows the map by then.
  auto where = std::make_shared<std::atomic<std::uint64_t>>(0);
  auto reader = spawn_fn(b->system(), [region, where](caf::event_based_actor*) -> caf::behavior {
    return {[region](sum_atom) { return checksum(region); },
            [where](count_atom) { return where->load(); }};
  });
  b->publish(reader, "reader");
  auto r = a->remote_actor("node-b", "reader");
  REQUIRE(r);
  auto offset = expose_once_connected(*b, "node-a", region);
  REQUIRE_MESSAGE(offset, error_text(*b, offset));
  where->store(*offset);

  caf::scoped_actor self{a->system()};
  self->request(*r, 10s, count_atom::value)
      .receive([&](std::uint64_t told) { CHECK(told == *offset); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  for (std::uint64_t round = 0; round < 5; ++round) {
    auto data = a->allocate(region.size());
    fill(data, round);
    a->write("node-b", *offset, data, caf::actor_cast<caf::actor>(self));
    self->request(*r, 10s, sum_atom::value)
        .receive([&](std::uint64_t sum) { CHECK(sum == checksum(data)); },
                 [&](caf::error& e) { FAIL(a->system().render(e)); });
  }
  CHECK(a->stats().node.direct_writes == 5);

  // Past the end of the map: dropped, and the writer is told.
  a->write("node-b", *offset + region.size() - 10, a->allocate(100),
           caf::actor_cast<caf::actor>(self));
  bool told = false;
  self->receive([&](undelivered_atom, const std::string& node,
                    const caf::error& e) { told = node == "node-b" && is(e, errc::not_mapped); },
                caf::after(5s) >> [] {});
  CHECK(told);
  CHECK(b->unexpose("node-a", *offset));
  CHECK_FALSE(b->unexpose("node-a", *offset));
}

TEST_CASE("runtime: a message the receiver cannot decode fails the request, saying so") {
  // node-b's config lacks the test types: it cannot read a blob.
  auto b = std::make_unique<runtime>(node_settings("node-b"));
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}));
  b->publish(spawn_sink(b->system()), "sink");
  auto s = a->remote_actor("node-b", "sink");
  REQUIRE(s);
  caf::scoped_actor self{a->system()};
  caf::error failure;
  self->request(*s, 5s, blob{1, a->allocate(10)})
      .receive([](caf::message&) {}, [&](caf::error& e) { failure = e; });
  CHECK_MESSAGE(is(failure, errc::decode_failure), a->system().render(failure));
  CHECK(a->system().render(failure).find("node 'node-b'") != std::string::npos);
  CHECK(b->stats().node.bad_inbound == 1);
}
