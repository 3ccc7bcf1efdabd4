// Large messages by rendezvous between two runtimes (tcp here, rdma in the
// VM): with channel.rendezvous set, buffers from that size stay with the
// sender until the receiving node fetched them; the application sees the
// same messages, in the same order, and an actor may say where its
// buffers land (runtime::receive_into).
#include "cluster.hpp"

#include <doctest/doctest.h>

#include <atomic>

using namespace riomesh;
using namespace riomesh::test;

namespace {

connection_counters of(runtime& rt, const std::string& peer) {
  for (const auto& [name, c] : rt.stats().peers)
    if (name == peer)
      return c;
  FAIL("no connection to " << peer);
  return {};
}

// node-a dials node-b; both lend from 256 KiB on; arenas of 4 MiB.
struct lending_nodes {
  std::unique_ptr<runtime> b, a;
  lending_nodes() {
    auto sb = node_settings("node-b");
    sb.channel.rendezvous = 256 << 10;
    sb.channel.arena = 4 << 20;
    b = start_node(sb);
    auto sa = node_settings("node-a", {{"node-b", b->port()}});
    sa.channel.rendezvous = 256 << 10;
    sa.channel.arena = 4 << 20;
    a = start_node(sa);
    if (!wait_routed(*a, "node-b") || !wait_routed(*b, "node-a"))
      throw std::runtime_error("lending_nodes: no connection within 10 s");
  }
};

}  // namespace

TEST_CASE_FIXTURE(lending_nodes,
                  "rendezvous: lent buffers arrive whole and in order with placed and inline ones, "
                  "and the sender's go back once fetched") {
  auto sink = spawn_sink(b->system());
  b->publish(sink, "sink");
  auto remote = once_connected([&] { return a->remote_actor("node-b", "sink"); });
  REQUIRE(remote);
  caf::scoped_actor self{a->system()};
  // Sizes around the threshold, and one larger than the peer's arena.
  const std::vector<std::size_t> sizes = {100, 300 << 10, 64 << 10, 256 << 10, 5000, 8 << 20};
  const std::uint64_t count = 24;
  std::atomic<int> returned{0};
  for (std::uint64_t seq = 0; seq < count; ++seq) {
    auto n = sizes[seq % sizes.size()];
    auto data = a->allocate(n);
    fill(data, seq);
    // The sender's own handle to its memory: it learns reuse when the
    // node lets go of its copy of the handle.
    auto watched = buffer::wrap(data.data(), n, [data, &returned] { ++returned; });
    self->send(*remote, blob{seq, watched});
  }
  bool intact = false;
  std::uint64_t got = 0;
  for (int tries = 0; tries < 300 && got < count; ++tries) {
    got = sink_count(self, sink, intact);
    if (got < count)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(got == count);
  CHECK(intact);
  auto lent = of(*a, "node-b").buffers_lent;
  auto fetched = of(*b, "node-a").buffers_fetched;
  MESSAGE("over " << fabric_under_test() << ": " << lent << " lent, " << fetched << " fetched");
  CHECK(lent == 12);  // 300 KiB, 256 KiB and 8 MiB, four times each
  CHECK(fetched == 12);
  CHECK(of(*b, "node-a").streamed_bytes_in == 0);  // 8 MiB came whole
  for (int tries = 0; tries < 250 && returned.load() < static_cast<int>(count); ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(returned.load() == static_cast<int>(count));
  CHECK(of(*a, "node-b").loans_open == 0);
}

TEST_CASE_FIXTURE(lending_nodes,
                  "rendezvous: an actor's lent buffers land in the memory it gives for them") {
  auto mine = b->allocate(4 << 20);
  auto* base = mine.data();
  std::atomic<int> asked{0};
  std::string from;
  // Answers whether the buffer it got lies in its own memory, and its sum.
  // (spawn_fn: CAF 0.17 trips over a spawned lambda with no arguments.)
  auto owner = spawn_fn(b->system(), [base](caf::event_based_actor*) -> caf::behavior {
    return {[base](sum_atom, const buffer& got) {
      return std::make_tuple(got.data() == base, checksum(got));
    }};
  });
  b->receive_into(owner, [&, mine](std::size_t size, const std::string& node) {
    ++asked;
    from = node;
    return size <= mine.size() ? mine.slice(0, size) : buffer{};
  });
  b->publish(owner, "owner");
  auto remote = once_connected([&] { return a->remote_actor("node-b", "owner"); });
  REQUIRE(remote);
  auto data = a->allocate(1 << 20);
  fill(data, 7);
  caf::scoped_actor self{a->system()};
  bool in_mine = false;
  std::uint64_t sum = 0;
  self->request(*remote, std::chrono::seconds(10), sum_atom::value, data)
      .receive([&](bool landed_in_mine, std::uint64_t s) { in_mine = landed_in_mine, sum = s; },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  CHECK(in_mine);
  CHECK(sum == checksum(data));
  CHECK(asked.load() == 1);
  CHECK(from == "node-a");
  // Removed: the node's pool again.
  b->receive_into(owner, nullptr);
  self->request(*remote, std::chrono::seconds(10), sum_atom::value, data)
      .receive([&](bool landed_in_mine, std::uint64_t s) { in_mine = landed_in_mine, sum = s; },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  CHECK_FALSE(in_mine);
  CHECK(sum == checksum(data));
  CHECK(asked.load() == 1);
  caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
}

TEST_CASE("rendezvous: what a receiver fetches of one message is bounded by its max_streamed") {
  // node-b takes at most 1 MiB of one message beyond what is placed; its
  // sender refuses a larger lent buffer as too_large, and the connection
  // lives on for what fits.
  auto sb = node_settings("node-b");
  sb.channel.max_streamed = 1 << 20;
  sb.channel.rendezvous = 256 << 10;
  auto b = start_node(sb);
  b->publish(spawn_sink(b->system()), "sink");
  auto sa = node_settings("node-a", {{"node-b", b->port()}});
  sa.channel.rendezvous = 256 << 10;
  auto a = start_node(sa);
  auto sink = once_connected([&] { return a->remote_actor("node-b", "sink"); });
  REQUIRE(sink);
  caf::scoped_actor self{a->system()};
  bool refused = false;
  self->request(*sink, std::chrono::seconds(10), sum_atom::value, a->allocate(2 << 20))
      .receive([](std::uint64_t) { FAIL("lent past the receiver's limit"); },
               [&](caf::error& e) {
                 refused = is(e, errc::too_large);
                 MESSAGE(a->system().render(e));
               });
  CHECK(refused);
  auto fits = a->allocate(1 << 20);
  fill(fits, 3);
  CHECK(sum_at(*a, *sink, fits) == checksum(fits));
  CHECK(of(*a, "node-b").buffers_lent == 1);
  CHECK(a->stats().node.payload_copied_out == 0);
  CHECK(b->stats().node.payload_copied_in == 0);
}
