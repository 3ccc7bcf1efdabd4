// The node's memory domain on real verbs: one protection domain and one
// send registration cache per device for all of a node's connections,
// windows that keep each connection's exposed memory to its own peer, and
// the bound on pinned memory, dma-buf on a device without it. Runs in the soft-RoCE VM (ctest -L
// vm).
#include "rdma_pairs.hpp"
#include "vm_address.hpp"

#include <riomesh/channels/memory/memory_region.hpp>
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <doctest/doctest.h>

#include <infiniband/verbs.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace riomesh::channels::verbs {

// What the window test needs to forge a write: queue pairs, completion
// queues, the exposed ring and its key.
struct rdma_channel_probe {
  static ibv_qp* qp(rdma_channel& c) { return c.qp_; }
  // The connection's completions, raw, without its engine seeing them:
  // from its inbox on the shared queue (whose watcher may have sorted them
  // already), or from a queue of its own.
  static std::vector<ibv_wc> completions(rdma_channel& c) {
    std::vector<ibv_wc> out;
    if (c.shared_) {
      c.shared_->collect(*c.inbox_, c.cq_seen_, true, out);
      return out;
    }
    ibv_wc wc{};
    while (ibv_poll_cq(c.cq_, 1, &wc) == 1)
      out.push_back(wc);
    return out;
  }
  static ibv_pd* pd(rdma_channel& c) { return c.pd_; }
  static unsigned char* ring(rdma_channel& c) { return c.recv_ring_.data(); }
  static std::size_t ring_size(rdma_channel& c) { return c.recv_ring_.size(); }
  static std::uint32_t ring_rkey(rdma_channel& c) { return c.ring_x_.rkey; }
  static std::size_t held(rdma_channel& c) { return c.held_.size(); }
};

}  // namespace riomesh::channels::verbs

using namespace riomesh;
using namespace riomesh::channels;
using namespace riomesh::channels::verbs;
using riomesh::test::carries;
using riomesh::test::connect_pairs;
using riomesh::test::pair;
using riomesh::test::receive;
using riomesh::test::with;

TEST_CASE(
    "memory domain: a block sent on 8 connections is registered once, on one protection "
    "domain") {
  auto mine = std::make_shared<memory_domain>(memory_limits{});
  auto theirs = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(8, mine, theirs);
  for (auto& p : pairs) {
    CHECK(p.dialer->uses_windows());
    CHECK(p.acceptor->uses_windows());
    CHECK(rdma_channel_probe::pd(*p.dialer) == rdma_channel_probe::pd(*pairs[0].dialer));
    CHECK(carries(*p.dialer, *p.acceptor, "hello through the windows"));
    CHECK(carries(*p.acceptor, *p.dialer, "and back"));
  }
  std::vector<unsigned char> block(1 << 20, 7);
  auto keep = std::make_shared<int>(0);
  std::vector<std::uint64_t> pins;
  for (auto& p : pairs) {
    auto pin = p.dialer->pin_memory(block.data(), block.size(), keep);
    REQUIRE(pin);
    CHECK(pin->fresh == (&p == &pairs[0]));
    pins.push_back(pin->id);
  }
  auto s = mine->stats();
  CHECK(s.devices == 1);
  CHECK(s.cache_misses == 1);
  CHECK(s.cache_hits == 7);
  CHECK(s.cache_entries == 1);
  CHECK(keep.use_count() == 2);  // the cached registration holds the block
  for (std::size_t i = 0; i < pairs.size(); ++i)
    pairs[i].dialer->unpin_memory(pins[i]);
  pairs.clear();
  // Every connection's own regions went with it; the cached one stays.
  s = mine->stats();
  CHECK(s.registered == 1);
  CHECK(s.pinned_bytes == s.cache_bytes);  // the block's pages
  CHECK(s.cache_bytes >= block.size());
  CHECK(theirs->stats().registered == 0);
  CHECK(theirs->stats().pinned_bytes == 0);
}

TEST_CASE(
    "memory domain: a window bound to one connection refuses another connection's write, "
    "and the memory behind it is untouched") {
  auto mine = std::make_shared<memory_domain>(memory_limits{});
  auto theirs = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(2, mine, theirs);
  auto& victim = *pairs[0].acceptor;
  auto& thief = *pairs[1].dialer;
  // The thief knows the victim's ring address and key, as a peer that
  // guessed them would; it is in the victim's protection domain.
  REQUIRE(rdma_channel_probe::pd(*pairs[1].acceptor) == rdma_channel_probe::pd(victim));
  std::vector<unsigned char> before(
      rdma_channel_probe::ring(victim),
      rdma_channel_probe::ring(victim) + rdma_channel_probe::ring_size(victim));
  std::vector<unsigned char> forged(64, 0xEE);
  ibv_mr* mr = ibv_reg_mr(rdma_channel_probe::pd(thief), forged.data(), forged.size(),
                          IBV_ACCESS_LOCAL_WRITE);
  REQUIRE(mr);
  ibv_sge sge{reinterpret_cast<std::uint64_t>(forged.data()),
              static_cast<std::uint32_t>(forged.size()), mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 0xF0F0;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<std::uint64_t>(rdma_channel_probe::ring(victim));
  wr.wr.rdma.rkey = rdma_channel_probe::ring_rkey(victim);
  ibv_send_wr* bad = nullptr;
  REQUIRE(ibv_post_send(rdma_channel_probe::qp(thief), &wr, &bad) == 0);
  ibv_wc wc{};
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < until) {
    for (const auto& got : rdma_channel_probe::completions(thief))
      if (got.wr_id == 0xF0F0) {
        wc = got;
        seen = true;
      }
    victim.progress();
  }
  REQUIRE(seen);
  MESSAGE("the forged write: " << std::string{ibv_wc_status_str(wc.status)});
  CHECK(wc.status == IBV_WC_REM_ACCESS_ERR);
  CHECK(std::memcmp(before.data(), rdma_channel_probe::ring(victim), before.size()) == 0);
  // The victim's connection goes on.
  CHECK(carries(*pairs[0].dialer, victim, "still ours"));
  ibv_dereg_mr(mr);
}

TEST_CASE(
    "memory domain: a registration past memory.max_pinned is refused, naming it and "
    "RLIMIT_MEMLOCK") {
  memory_limits tight;
  tight.max_pinned = 128 * 1024;  // less than one connection's rings
  auto mine = std::make_shared<memory_domain>(tight);
  std::string error;
  auto listener = rdma_listener::listen({addr(), 0}, {}, error);
  REQUIRE(listener);
  std::thread acceptor([&] {
    std::string e;
    listener->accept(std::chrono::seconds(2), e);
  });
  auto ch = rdma_channel::connect({addr(), static_cast<std::uint16_t>(listener->port())},
                                  with(mine), error);
  acceptor.join();
  CHECK_FALSE(ch);
  MESSAGE(error);
  CHECK(error.find("past memory.max_pinned (memory.max_pinned: 128 KiB, RLIMIT_MEMLOCK: ") !=
        std::string::npos);
  CHECK(mine->stats().refused >= 1);
  CHECK(mine->stats().pinned_bytes == 0);
}

TEST_CASE("memory domain: at the pinned bound, unused cached registrations make room") {
  memory_limits l;
  l.max_pinned = 2 * 1024 * 1024;  // the rings, and one 1 MiB block
  auto mine = std::make_shared<memory_domain>(l);
  auto theirs = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(1, mine, theirs);
  auto& ch = *pairs[0].dialer;
  std::vector<unsigned char> a(1 << 20), b(1 << 20);
  auto pa = ch.pin_memory(a.data(), a.size(), nullptr);
  REQUIRE(pa);
  // Pinned, a stays: b does not fit beside it.
  CHECK_FALSE(ch.pin_memory(b.data(), b.size(), nullptr));
  ch.unpin_memory(pa->id);
  auto pb = ch.pin_memory(b.data(), b.size(), nullptr);
  REQUIRE(pb);
  auto s = mine->stats();
  CHECK(s.cache_evictions == 1);
  CHECK(s.cache_entries == 1);
  CHECK(s.pinned_bytes <= l.max_pinned);
  ch.unpin_memory(pb->id);
}

TEST_CASE(
    "memory domain: an accepting side that speaks first holds its writes until the "
    "dialer's first write is in, then they arrive in order") {
  auto mine = std::make_shared<memory_domain>(memory_limits{});
  auto theirs = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(1, mine, theirs);
  auto& dialer = *pairs[0].dialer;
  auto& acceptor = *pairs[0].acceptor;
  // Nothing of the dialer's has been taken in yet: its windows may not be
  // bound, so the acceptor's writes wait.
  std::string first = "the acceptor speaks first";
  REQUIRE(acceptor.send(first.data(), first.size()).bytes == first.size());
  CHECK(rdma_channel_probe::held(acceptor) > 0);
  // The dialer writes (its engine's first credits, or data), after its
  // binds; taking that in releases what was held.
  CHECK(carries(dialer, acceptor, "the dialer's first words"));
  CHECK(rdma_channel_probe::held(acceptor) == 0);
  CHECK(receive(acceptor, dialer, first.size()) == first);
  CHECK(carries(acceptor, dialer, "and then as usual"));
  CHECK_FALSE(rdma_channel_probe::held(dialer));  // a dialer never holds
}

// Lets every acceptor arm and settle until none of their wait sets shows
// anything for 200 ms (credit updates and their completions die down).
void settle(std::vector<pair>& pairs) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    bool quiet = true;
    for (auto& p : pairs) {
      p.dialer->progress();
      p.acceptor->progress();
      while (p.acceptor->arm())
        p.acceptor->progress();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (auto& p : pairs) {
      pollfd fd{p.acceptor->wait_fd(), POLLIN, 0};
      quiet = quiet && ::poll(&fd, 1, 0) == 0;
    }
    if (quiet)
      return;
  }
  FAIL("the connections did not settle within 5 s");
}

bool readable(rdma_channel& ch, int timeout_ms) {
  pollfd fd{ch.wait_fd(), POLLIN, 0};
  return ::poll(&fd, 1, timeout_ms) == 1;
}

TEST_CASE(
    "shared completion queue: connections on one queue sleep, and a completion wakes the one "
    "it is for and no other") {
  memory_limits all_shared;
  all_shared.shared_cq_from = 1;
  auto mine = std::make_shared<memory_domain>(all_shared);
  auto theirs = std::make_shared<memory_domain>(all_shared);
  auto pairs = connect_pairs(3, theirs, mine);
  for (auto& p : pairs) {
    REQUIRE(carries(*p.dialer, *p.acceptor, "first"));
    REQUIRE(carries(*p.acceptor, *p.dialer, "back"));
  }
  CHECK(mine->stats().completion_queues == 1);
  CHECK(mine->stats().cq_queue_pairs == 3);
  settle(pairs);
  auto kicks = mine->stats().cq_kicks;
  const std::string text = "for the second only";
  REQUIRE(pairs[1].dialer->send(text.data(), text.size()).bytes == text.size());
  // The watcher takes the queue's signal and kicks the sleeper it is for.
  CHECK(readable(*pairs[1].acceptor, 5000));
  CHECK_FALSE(readable(*pairs[0].acceptor, 200));
  CHECK_FALSE(readable(*pairs[2].acceptor, 0));
  CHECK(mine->stats().cq_kicks > kicks);
  CHECK(receive(*pairs[1].dialer, *pairs[1].acceptor, text.size()) == text);
  // A connection that is awake (it just looked) is not kicked: it finds
  // its completions by polling.
  auto& spinner = *pairs[2].acceptor;
  spinner.busy_poll();
  kicks = mine->stats().cq_kicks;
  REQUIRE(pairs[2].dialer->send("x", 1).bytes == 1);
  char got = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got != 'x' && std::chrono::steady_clock::now() < until) {
    pairs[2].dialer->progress();
    spinner.busy_poll();
    spinner.recv(&got, 1);
  }
  CHECK(got == 'x');
  CHECK(mine->stats().cq_kicks == kicks);
}

TEST_CASE(
    "dma-buf: a vgem buffer's descriptor is refused by rxe with EOPNOTSUPP, and the channel "
    "says it cannot map dma-buf") {
  std::string error;
  auto gpu = memory_region::make({config::memory_provider::dmabuf, {}}, 1 << 20, "test", error);
  REQUIRE_MESSAGE(static_cast<bool>(gpu), error);  // the VM loads vgem
  CHECK(gpu->dmabuf());
  std::memset(gpu->data(), 0x5a, gpu->size());  // its CPU mapping works
  auto mine = std::make_shared<memory_domain>(memory_limits{});
  auto theirs = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(1, mine, theirs);
  auto& ch = *pairs[0].dialer;
  std::string why;
  CHECK_FALSE(ch.maps_dmabuf(why));
  MESSAGE(why);
  CHECK(why.find("cannot register dma-buf") != std::string::npos);
  CHECK(why.find("not supported") != std::string::npos);
  // The verb itself, with the real descriptor: what the probe concluded.
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(rdma_channel_probe::pd(ch), 0, gpu->size(),
                                 reinterpret_cast<std::uint64_t>(gpu->data()), gpu->fd(),
                                 IBV_ACCESS_LOCAL_WRITE);
  int err = errno;  // before a CHECK: reporting one (-s) may set errno
  CHECK(mr == nullptr);
  CHECK(err == EOPNOTSUPP);
  if (mr)
    ibv_dereg_mr(mr);
  // Mapping it anyway fails cleanly, pinning nothing.
  auto pinned = mine->stats().pinned_bytes;
  CHECK(ch.map_dmabuf(gpu->data(), gpu->size(), gpu->fd(), std::nullopt).st != status::ok);
  CHECK(mine->stats().pinned_bytes == pinned);
  CHECK(carries(ch, *pairs[0].acceptor, "and the connection goes on"));
}

TEST_CASE(
    "memory domain: attaching every device at start opens each once, as connections use "
    "them, and tells which cannot register dma-buf") {
  auto domain = std::make_shared<memory_domain>(memory_limits{});
  std::string error;
  auto devices = domain->attach_all(error);
  REQUIRE_MESSAGE(!devices.empty(), error);
  CHECK(domain->stats().devices == devices.size());
  std::string why;
  bool rxe = false;
  for (auto* d : devices)
    if (d->name() == "rxe0") {
      rxe = true;
      CHECK_FALSE(d->dmabuf(why));
    }
  CHECK(rxe);
  CHECK(why.find("rxe0 cannot register dma-buf") != std::string::npos);
  // A connection comes with the same device context: no second domain.
  auto theirs = std::make_shared<memory_domain>(memory_limits{});
  auto pairs = connect_pairs(1, domain, theirs);
  CHECK(carries(*pairs[0].dialer, *pairs[0].acceptor, "through the domain opened at start"));
  CHECK(domain->stats().devices == devices.size());
  CHECK(domain->attach_all(error) == devices);
}
