// cq_poll_bench: what a progress thread pays to busy-poll its connections'
// completion queues, one queue each (today), against one shared queue.
// A spin of the I/O loop polls every connection's queue once; with nothing
// to take, each poll is an empty look at the queue. Prints, for N queues,
// the time of one spin over N empty queues and of one poll of a single
// queue: what a shared queue per progress thread would save per spin.
//
//   cq_poll_bench [--device NAME] [--spins N]
// Needs an RDMA device: in this project's VM, tools/vm-run.sh -- bench/cq_poll_bench
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

}  // namespace

int main(int argc, char** argv) {
  std::string want;
  int spins = 20000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      want = argv[++i];
    else if (!std::strcmp(argv[i], "--spins") && i + 1 < argc)
      spins = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: cq_poll_bench [--device NAME] [--spins N]\n");
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
  return 0;
}
