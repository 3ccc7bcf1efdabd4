// The node's memory seen from the runtime: a pool buffer sent to many
// peers is registered once node-wide, and every connection's own
// registrations go with it (on tcp nothing is registered, nothing is
// counted); memfd arenas and slabs that another process can map.
#include "cluster.hpp"

#include <doctest/doctest.h>

#include <sys/mman.h>

#include <cstring>
#include <fstream>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;

TEST_CASE(
    "memory domain: a pool buffer sent to 64 peers registers its slab once, node-wide, and the "
    "connections from memory.shared_cq_from on share a few completion queues") {
  bool rdma = fabric_under_test() == "rdma";
  const int n = rdma ? 64 : 8;
  std::vector<std::unique_ptr<runtime>> peers;
  std::vector<std::pair<std::string, std::uint16_t>> where;
  for (int i = 0; i < n; ++i) {
    auto s = node_settings("peer-" + std::to_string(i));
    s.channel.arena = 1 << 20;  // 64 arenas of it, all registered, in the VM
    s.runtime.threads = 1;
    peers.push_back(start_node(s));
    peers.back()->publish(spawn_sink(peers.back()->system()), "sink");
    where.emplace_back("peer-" + std::to_string(i), peers.back()->port());
  }
  auto sa = node_settings("node-a", where);
  sa.channel.arena = 1 << 20;  // one per peer, each registered
  sa.memory.shared_cq_from = 9;
  auto a = start_node(sa);
  auto before = a->stats().memory;
  // Placed, below channel.rendezvous: lent, each of 64 peers in this one
  // VM would fetch it into a pool slab of its own.
  auto data = a->allocate(200 << 10);
  fill(data, 64);
  for (int i = 0; i < n; ++i) {
    auto sink = a->remote_actor("peer-" + std::to_string(i), "sink");
    REQUIRE(sink);
    CHECK(sum_at(*a, *sink, data) == checksum(data));
  }
  auto s = a->stats();
  std::uint64_t fresh = 0, hits = 0, per_write = 0;
  for (const auto& [peer, c] : s.peers) {
    fresh += c.registrations;
    hits += c.registration_hits;
    per_write += c.per_write_registrations;
  }
  MESSAGE(n << " peers: " << s.memory.registrations << " registrations made by node-a, "
            << s.memory.registered << " live, " << (s.memory.pinned_bytes >> 10)
            << " KiB pinned (peak " << (s.memory.peak_pinned_bytes >> 10) << " KiB); cache: "
            << s.memory.cache_misses << " miss, " << s.memory.cache_hits << " hits");
  if (rdma) {
    CHECK(s.memory.devices == 1);
    CHECK(s.memory.cache_misses - before.cache_misses == 1);  // the slab, once
    CHECK(fresh == 1);
    CHECK(hits == static_cast<std::uint64_t>(n - 1));
    CHECK(per_write == 0);
    // The first 8 connections have queues of their own; from the 9th on
    // the 56 share as many as the device's largest queue needs to hold every
    // request they can have posted (rxe: 2), not one each.
    CHECK(s.memory.completion_queues >= 1);
    CHECK(s.memory.completion_queues <= 4);
    CHECK(s.memory.cq_queue_pairs == static_cast<std::uint64_t>(n - 8));
    MESSAGE(n << " connections on " << s.memory.completion_queues << " completion queues");
  } else {
    CHECK(s.memory.devices == 0);
    CHECK(s.memory.registrations == 0);
    CHECK(fresh + hits + per_write == 0);
  }
  // Every connection's rings and arena go with it; the cached slab stays.
  peers.clear();
  // (A channel goes a moment after its peer leaves the node's table.)
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto after = a->stats().memory;
  // (A registration's count and its bytes go down one after the other.)
  while ((!a->stats().peers.empty() || after.registered != after.cache_entries ||
          after.pinned_bytes != after.cache_bytes || after.cq_queue_pairs != 0) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after = a->stats().memory;
  }
  CHECK(after.registered == after.cache_entries);
  CHECK(after.pinned_bytes == after.cache_bytes);
  // Each closed connection left the shared queue with its completions.
  CHECK(after.cq_queue_pairs == 0);
  MESSAGE("shared completion queue: " << after.cq_polls << " polls, " << after.cq_kicks
                                      << " sleeping connections woken, " << after.cq_strays
                                      << " completions of closed connections dropped");
}

namespace {

// 1 if `b`'s descriptor, mapped as another process would, shows its bytes.
std::uint64_t maps_to_bytes(const buffer& b) {
  auto d = b.descriptor();
  if (!d)
    return 0;
  auto page = d->second / 4096 * 4096;
  auto span = d->second - page + b.size();
  void* view = mmap(nullptr, span, PROT_READ, MAP_SHARED, d->first, static_cast<off_t>(page));
  if (view == MAP_FAILED)
    return 0;
  bool same =
      std::memcmp(static_cast<unsigned char*>(view) + (d->second - page), b.data(), b.size()) == 0;
  munmap(view, span);
  return same ? 1 : 0;
}

bool mapped_as(const std::string& memfd_name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("/memfd:" + memfd_name) != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE(
    "memfd: pool slabs and receive arenas from memfd, a received buffer's descriptor maps "
    "to its bytes") {
  auto sb = node_settings("node-b");
  sb.memory.provider = config::memory_provider::memfd;
  auto b = start_node(sb);
  auto sa = node_settings("node-a", {{"node-b", b->port()}});
  sa.memory.provider = config::memory_provider::memfd;
  auto a = start_node(sa);
  auto checker = spawn_fn(b->system(), [](caf::event_based_actor*) -> caf::behavior {
    return {[](sum_atom, const buffer& data) {
      return data.where() == buffer::origin::arena ? maps_to_bytes(data) : 0;
    }};
  });
  b->publish(checker, "checker");
  auto to = a->remote_actor("node-b", "checker");
  REQUIRE(to);
  auto data = a->allocate(200 << 10);  // placed (below channel.rendezvous)
  fill(data, 5);
  CHECK(maps_to_bytes(data) == 1);    // the sender's pool slab
  CHECK(sum_at(*a, *to, data) == 1);  // placed into b's arena, found through its memfd
  CHECK(mapped_as("riomesh-pool"));
  CHECK(mapped_as("riomesh-arena"));
  CHECK(a->stats().node.payload_copied_out == 0);
}

TEST_CASE("iomap manager: a send registration unused for memory.cache_idle is given back") {
  auto sa = node_settings("node-a");
  sa.memory.cache_idle = std::chrono::milliseconds(200);
  auto b = start_node(node_settings("node-b"));
  sa.cluster.peers.push_back({"node-b", {sa.node.listen.host, b->port()}});
  auto a = start_node(sa);
  b->publish(spawn_sink(b->system()), "sink");
  auto sink = a->remote_actor("node-b", "sink");
  REQUIRE(sink);
  auto data = a->allocate(200 << 10);  // placed from the send cache (below channel.rendezvous)
  fill(data, 9);
  CHECK(sum_at(*a, *sink, data) == checksum(data));
  auto sent = a->stats().memory;
  if (fabric_under_test() != "rdma") {
    CHECK(sent.registrations == 0);  // tcp registers nothing
    return;
  }
  CHECK(sent.cache_entries == 1);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto now = sent;
  while (now.cache_entries > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    now = a->stats().memory;
  }
  CHECK(now.cache_entries == 0);
  CHECK(now.cache_trimmed == 1);
  CHECK(now.registered == sent.registered - 1);
  CHECK(now.pinned_bytes < sent.pinned_bytes);
  // Sent from again, it is registered again.
  CHECK(sum_at(*a, *sink, data) == checksum(data));
  CHECK(a->stats().memory.cache_misses == sent.cache_misses + 1);
}

namespace {

// What node `rt` exposes to `peer` now: (maps, bytes), from its stats.
std::pair<std::uint64_t, std::uint64_t> exposed_to(runtime& rt, const std::string& peer) {
  for (const auto& [name, c] : rt.stats().peers)
    if (name == peer)
      return {c.exposed_maps, c.exposed_bytes};
  return {0, 0};
}

}  // namespace

TEST_CASE_FIXTURE(two_nodes,
                  "iomap manager: exposes and unexposes memory per peer, each map counted in the "
                  "peer's stats until taken down, and refuses a peer it has no link to by name") {
  auto one = b->allocate(1 << 20), two = b->allocate(3000);
  auto first = expose_once_connected(*b, "node-a", one);
  REQUIRE_MESSAGE(first, error_text(*b, first));
  auto second = b->expose("node-a", two);
  REQUIRE_MESSAGE(second, error_text(*b, second));
  CHECK(*second != *first);
  CHECK(exposed_to(*b, "node-a") ==
        std::make_pair<std::uint64_t, std::uint64_t>(2, (1 << 20) + 3000));
  CHECK(b->unexpose("node-a", *first));
  CHECK(exposed_to(*b, "node-a") == std::make_pair<std::uint64_t, std::uint64_t>(1, 3000));
  CHECK_FALSE(b->unexpose("node-a", *first));  // taken down already
  CHECK(b->unexpose("node-a", *second));
  CHECK(exposed_to(*b, "node-a") == std::make_pair<std::uint64_t, std::uint64_t>(0, 0));

  auto nowhere = b->expose("node-z", one);
  REQUIRE_FALSE(nowhere);
  CHECK(is(nowhere.error(), errc::not_connected));
  CHECK(b->system().render(nowhere.error()).find("node 'node-z'") != std::string::npos);
  CHECK_FALSE(b->unexpose("node-z", 0));
  auto empty = b->expose("node-a", buffer{});
  REQUIRE_FALSE(empty);
  CHECK(b->system().render(empty.error()).find("empty buffer") != std::string::npos);
}
