// The node's memory domain seen from the runtime: a pool buffer sent to
// many peers is registered once node-wide, and every connection's own
// registrations go with it. On tcp nothing is registered, and nothing is
// counted.
#include "cluster.hpp"

#include <doctest/doctest.h>

using namespace riomesh;
using namespace riomesh::test;

TEST_CASE("memory domain: a pool buffer sent to 64 peers registers its slab once, node-wide") {
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
  auto a = start_node(sa);
  auto before = a->stats().memory;
  auto data = a->allocate(256 << 10);
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
  } else {
    CHECK(s.memory.devices == 0);
    CHECK(s.memory.registrations == 0);
    CHECK(fresh + hits + per_write == 0);
  }
  // Every connection's rings and arena go with it; the cached slab stays.
  peers.clear();
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (a->stats().peers.size() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto after = a->stats().memory;
  CHECK(after.registered == after.cache_entries);
  CHECK(after.pinned_bytes == after.cache_bytes);
}
