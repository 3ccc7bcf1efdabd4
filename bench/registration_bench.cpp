// What exposing a buffer to a peer for one loan costs the device, as the
// rdma channel does it for every buffer it lends (rdma_windows.cpp): a
// registration with window binding, a type 2 memory window, and both
// taken down again. Against the time a message of that size takes, this
// says whether caching exposures could pay. Needs an RDMA device (the VM:
// tools/vm-run.sh -- build/bench/registration_bench).
//
// Usage: registration_bench [DEVICE] [REPS]   (default: the first device, 200)
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string want = argc > 1 ? argv[1] : "";
  int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (reps <= 0) {
    std::fprintf(stderr, "registration_bench: REPS must be a positive number, not '%s'\n", argv[2]);
    return 2;
  }
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_device* dev = nullptr;
  for (int i = 0; i < n && !dev; ++i)
    if (want.empty() || want == ibv_get_device_name(list[i]))
      dev = list[i];
  if (!dev) {
    std::fprintf(stderr, "registration_bench: no RDMA device%s\n",
                 want.empty() ? "" : (" named " + want).c_str());
    return 1;
  }
  ibv_context* ctx = ibv_open_device(dev);
  ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : nullptr;
  if (!pd) {
    std::fprintf(stderr, "registration_bench: cannot open %s: %s\n", ibv_get_device_name(dev),
                 std::strerror(errno));
    return 1;
  }
  std::printf("%s, %d times each (us per exposure)\n", ibv_get_device_name(dev), reps);
  std::printf("%10s %12s %12s %12s\n", "bytes", "reg_mr", "window", "both down");
  for (std::size_t size : {65536ul, 262144ul, 1048576ul, 4194304ul, 16777216ul}) {
    std::vector<unsigned char> buf(size, 1);  // touched: its pages exist
    using clock = std::chrono::steady_clock;
    clock::duration reg{}, window{}, down{};
    for (int i = 0; i < reps; ++i) {
      auto t0 = clock::now();
      ibv_mr* mr = ibv_reg_mr(pd, buf.data(), size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
      auto t1 = clock::now();
      ibv_mw* mw = mr ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : nullptr;
      auto t2 = clock::now();
      if (!mr || !mw) {
        std::fprintf(stderr, "registration_bench: %s of %zu bytes failed: %s\n",
                     mr ? "a memory window" : "a registration", size, std::strerror(errno));
        return 1;
      }
      ibv_dealloc_mw(mw);
      ibv_dereg_mr(mr);
      auto t3 = clock::now();
      reg += t1 - t0;
      window += t2 - t1;
      down += t3 - t2;
    }
    auto us = [&](clock::duration d) {
      return std::chrono::duration<double, std::micro>(d).count() / reps;
    };
    std::printf("%10zu %12.1f %12.1f %12.1f\n", size, us(reg), us(window), us(down));
  }
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  return 0;
}
