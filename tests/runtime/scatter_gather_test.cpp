// Scatter-gather buffers between nodes: a buffer gathered from pieces at
// byte granularity, of every origin, travels as one message element and
// arrives as one contiguous buffer, each piece written from where it lies
// (no copy on the way out); the same for a direct write into memory a
// peer exposed. On tcp here, on rdma in the VM.
#include "cluster.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

TEST_CASE(
    "scatter-gather: buffers gathered from random pieces of every origin arrive whole and in "
    "order, sent without a copy, beyond the arena too") {
  auto seed = std::random_device{}();
  MESSAGE("seed ", seed, " on ", fabric_under_test());
  std::mt19937 rng(seed);
  auto sb = node_settings("node-b");
  sb.channel.arena = 4 << 20;  // the 6 MiB case streams through it in pieces
  auto b = start_node(sb);
  auto a = start_node(node_settings("node-a", {{"node-b", b->port()}}));
  b->publish(spawn_sink(b->system()), "sink");
  auto sink = a->remote_actor("node-b", "sink");
  REQUIRE(sink);
  std::vector<std::vector<unsigned char>> user_memory;
  auto copied_before = a->stats().node.payload_copied_out;
  for (std::size_t size : {std::size_t{64} << 10, (std::size_t{64} << 10) + 3,
                           (std::size_t{1} << 20) + 1, std::size_t{6} << 20}) {
    CAPTURE(size);
    auto reference = buffer::heap(size);
    fill(reference, size);
    auto g = scattered(*a, reference, rng, user_memory);
    CHECK(g.size() == size);
    CHECK(g.pieces().size() > 1);
    CHECK(sum_at(*a, *sink, g) == checksum(reference));
  }
  CHECK(a->stats().node.payload_copied_out == copied_before);  // placed, piece by piece
  // Below the eager threshold it goes inline: one copy, as any small buffer.
  auto small = buffer::copy_of("gathered", 8);
  CHECK(sum_at(*a, *sink, buffer::gather({small.slice(0, 3), small.slice(3, 5)})) ==
        checksum(small));
}

TEST_CASE_FIXTURE(two_nodes,
                  "scatter-gather: a direct write of a gathered buffer lands contiguous in the "
                  "memory the peer exposed, and a gathered buffer exposed takes writes across "
                  "its pieces") {
  auto region = b->allocate(1 << 20);
  std::fill(region.begin(), region.end(), 0);
  auto reader = spawn_fn(b->system(), [region](caf::event_based_actor*) -> caf::behavior {
    return {[region](sum_atom) { return checksum(region.slice(1000, 300000)); }};
  });
  b->publish(reader, "reader");
  auto r = a->remote_actor("node-b", "reader");
  REQUIRE(r);
  auto offset = expose_once_connected(*b, "node-a", region);
  REQUIRE_MESSAGE(offset, error_text(*b, offset));
  std::mt19937 rng(7);
  std::vector<std::vector<unsigned char>> user_memory;
  auto reference = buffer::heap(300000);
  fill(reference, 3);
  auto g = scattered(*a, reference, rng, user_memory);
  caf::scoped_actor self{a->system()};
  // b's answer comes behind its map on the same connection: once a has it,
  // a knows the map (a loaded run wrote before it did, and was refused).
  auto known_to_a = [&] {
    self->request(*r, 10s, sum_atom::value)
        .receive([](std::uint64_t) {}, [&](caf::error& e) { FAIL(a->system().render(e)); });
  };
  known_to_a();
  a->write("node-b", *offset + 1000, g, caf::actor_cast<caf::actor>(self));
  self->request(*r, 10s, sum_atom::value)
      .receive([&](std::uint64_t sum) { CHECK(sum == checksum(reference)); },
               [&](caf::error& e) { FAIL(a->system().render(e)); });
  // A gathered buffer exposed is one offset space over its pieces: a write
  // across it splits where they end.
  auto joined =
      b->expose("node-a", buffer::gather({region.slice(3, 10), region.slice(600000, 100)}));
  REQUIRE_MESSAGE(joined, error_text(*b, joined));
  known_to_a();
  auto across = buffer::heap(110);
  fill(across, 4);
  a->write("node-b", *joined, across, caf::actor_cast<caf::actor>(self));
  self->request(*r, 10s, sum_atom::value)  // behind the write
      .receive([](std::uint64_t) {}, [&](caf::error& e) { FAIL(a->system().render(e)); });
  CHECK(std::memcmp(region.data() + 3, across.data(), 10) == 0);
  CHECK(std::memcmp(region.data() + 600000, across.data() + 10, 100) == 0);
  CHECK(region.data()[2] == 0);
  CHECK(region.data()[13] == 0);
  CHECK(region.data()[600100] == 0);
  CHECK(b->unexpose("node-a", *joined));
}
