// cq_poll_bench: what a progress thread pays to busy-poll its connections'
// completion queues. A spin of the I/O loop looks at every connection
// once; with nothing to take, each look is an empty poll of a queue.
// First, bare verbs: for N queues, one spin over N empty queues against
// one poll of a single queue. Then riomesh's rdma channels, N connections
// on loopback: a spin of busy_poll() over them, each with its own queue
// (a private memory domain) against the node's shared queues (one memory
// domain for all: shared_cq.hpp).
//
//   cq_poll_bench [--device NAME] [--spins N] [--address A]
// Needs an RDMA device: in this project's VM, tools/vm-run.sh -- bench/cq_poll_bench
// (--address: an address of that device's interface; default
// RIOMESH_RDMA_ADDR, then 10.77.0.1).
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// Nanoseconds per spin over `cqs`, each polled once, `spins` times.
double spin_ns(const std::vector<ibv_cq*>& cqs, int spins) {
  ibv_wc wc[16];
  long taken = 0;
  auto t0 = clock_type::now();
  for (int s = 0; s < spins; ++s)
    for (auto* cq : cqs)
      taken += ibv_poll_cq(cq, 16, wc);
  auto ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
  if (taken != 0)
    std::fprintf(stderr, "cq_poll_bench: %ld completions on queues nothing posted to\n", taken);
  return ns / spins;
}

using riomesh::channels::verbs::memory_domain;
using riomesh::channels::verbs::rdma_channel;
using riomesh::channels::verbs::rdma_listener;
using riomesh::channels::verbs::rdma_params;

// Limits under which every connection shares the queues.
riomesh::channels::verbs::memory_limits all_shared() {
  riomesh::channels::verbs::memory_limits l;
  l.shared_cq_from = 1;
  return l;
}

// `n` connections on loopback at `address`, both ends in `domain` (null:
// each its own); the dialing ends in `out`, the accepting ends in `peers`.
bool connect_pairs(const std::string& address, int n, const std::shared_ptr<memory_domain>& domain,
                   std::vector<std::unique_ptr<rdma_channel>>& out,
                   std::vector<std::unique_ptr<rdma_channel>>& peers) {
  rdma_params p;
  p.domain = domain;
  std::string error;
  auto listener = rdma_listener::listen({address, 0}, p, error);
  if (!listener) {
    std::fprintf(stderr, "cq_poll_bench: listen on %s: %s\n", address.c_str(), error.c_str());
    return false;
  }
  riomesh::config::endpoint to{address, static_cast<std::uint16_t>(listener->port())};
  for (int i = 0; i < n; ++i) {
    auto dialed = std::async(std::launch::async, [&] {
      std::string e;
      auto ch = rdma_channel::connect(to, p, e);
      if (!ch)
        std::fprintf(stderr, "cq_poll_bench: connect: %s\n", e.c_str());
      return ch;
    });
    auto accepted = listener->accept(std::chrono::seconds(30), error);
    auto ch = dialed.get();
    if (!accepted || !ch) {
      std::fprintf(stderr, "cq_poll_bench: connection %d: %s\n", i + 1, error.c_str());
      return false;
    }
    out.push_back(std::move(ch));
    peers.push_back(std::move(accepted));
  }
  return true;
}

// Nanoseconds per spin of busy_poll() over `chans`.
double spin_channels_ns(const std::vector<std::unique_ptr<rdma_channel>>& chans, int spins) {
  auto t0 = clock_type::now();
  for (int s = 0; s < spins; ++s)
    for (const auto& c : chans)
      c->busy_poll();
  return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / spins;
}

}  // namespace

int main(int argc, char** argv) {
  std::string want;
  int spins = 20000;
  const char* env = std::getenv("RIOMESH_RDMA_ADDR");
  std::string address = env && *env ? env : "10.77.0.1";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      want = argv[++i];
    else if (!std::strcmp(argv[i], "--spins") && i + 1 < argc)
      spins = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--address") && i + 1 < argc)
      address = argv[++i];
    else {
      std::fprintf(stderr, "usage: cq_poll_bench [--device NAME] [--spins N] [--address A]\n");
      return 2;
    }
  }
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_context* ctx = nullptr;
  for (int i = 0; list && i < n && !ctx; ++i)
    if (want.empty() || want == ibv_get_device_name(list[i]))
      ctx = ibv_open_device(list[i]);
  if (!ctx) {
    std::fprintf(stderr, "cq_poll_bench: no RDMA device%s%s\n", want.empty() ? "" : " named ",
                 want.c_str());
    return 1;
  }
  std::printf("device %s, %d spins per figure\n", ibv_get_device_name(ctx->device), spins);
  std::printf("%8s %16s %16s %12s\n", "queues", "spin, own (ns)", "one shared (ns)", "saved/spin");
  std::vector<ibv_cq*> cqs;
  for (int want_n : {1, 4, 16, 64, 256}) {
    while (int(cqs.size()) < want_n) {
      ibv_cq* cq = ibv_create_cq(ctx, 256, nullptr, nullptr, 0);
      if (!cq) {
        std::fprintf(stderr, "cq_poll_bench: cannot create completion queue %zu: %s\n",
                     cqs.size() + 1, std::strerror(errno));
        return 1;
      }
      cqs.push_back(cq);
    }
    spin_ns(cqs, spins / 10);  // warm up
    double own = spin_ns(cqs, spins);
    double shared = spin_ns({cqs.front()}, spins);
    std::printf("%8d %16.0f %16.0f %11.0f ns\n", want_n, own, shared, own - shared);
  }
  for (auto* cq : cqs)
    ibv_destroy_cq(cq);
  ibv_close_device(ctx);
  ibv_free_device_list(list);

  std::printf("\nriomesh rdma channels on %s, a spin of busy_poll() over N idle connections\n",
              address.c_str());
  std::printf("%8s %16s %16s %10s %8s\n", "conns", "own queues (ns)", "shared (ns)", "ratio",
              "queues");
  for (int n : {1, 4, 16, 64}) {
    double figures[2] = {0, 0};
    std::uint64_t shared_queues = 0;
    for (int shared = 0; shared < 2; ++shared) {
      auto domain = shared ? std::make_shared<memory_domain>(all_shared()) : nullptr;
      std::vector<std::unique_ptr<rdma_channel>> chans, peers;
      if (!connect_pairs(address, n, domain, chans, peers))
        return 1;
      spin_channels_ns(chans, spins / 10);  // warm up
      figures[shared] = spin_channels_ns(chans, spins);
      if (domain)
        shared_queues = domain->stats().completion_queues;
    }
    std::printf("%8d %16.0f %16.0f %9.2fx %8llu\n", n, figures[0], figures[1],
                figures[0] / figures[1], static_cast<unsigned long long>(shared_queues));
  }
  return 0;
}
