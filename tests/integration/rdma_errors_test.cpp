// Startup errors of the rdma channel that a user must be able to act on.
// Runs in the soft-RoCE VM only (ctest -L vm), where RIOMESH_RDMA_ADDR is set.
#include "vm_address.hpp"

#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <doctest/doctest.h>

#include <sys/resource.h>

#include <cstdlib>
#include <thread>

using namespace riomesh;
using namespace riomesh::channels::verbs;

TEST_CASE("a locked-memory limit too low for the buffers is named, with how to raise it") {
  std::string error;
  auto listener = rdma_listener::listen({addr(), 0}, {}, error);
  REQUIRE(listener);
  rlimit low{64 * 1024, 64 * 1024};
  rlimit saved{};
  getrlimit(RLIMIT_MEMLOCK, &saved);
  REQUIRE(setrlimit(RLIMIT_MEMLOCK, &low) == 0);
  auto ch =
      rdma_channel::connect({addr(), static_cast<std::uint16_t>(listener->port())}, {}, error);
  setrlimit(RLIMIT_MEMLOCK, &saved);
  CHECK_FALSE(ch);
  CHECK(error ==
        "the locked-memory limit (ulimit -l, RLIMIT_MEMLOCK) is 64 KiB, but one connection "
        "registers 257 KiB; raise it (ulimit -l unlimited, or memlock in "
        "/etc/security/limits.conf)");
}

TEST_CASE("an address no RDMA device serves is refused by rdma_cm, and said so") {
  std::string error;
  // In the VM, lo carries no RDMA device: rdma_cm finds no route to it.
  auto ch = rdma_channel::connect({"127.0.0.1", 7471}, {}, error);
  CHECK_FALSE(ch);
  CHECK(error == "rdma_cm cannot find a route to 127.0.0.1:7471: No such device");
}

TEST_CASE("queue sizes beyond the device are clamped, and the channel says so") {
  std::string error;
  rdma_params big;
  big.engine.sq_size = 1u << 20;  // more than any device offers
  auto listener = rdma_listener::listen({addr(), 0}, {}, error);
  REQUIRE(listener);
  std::string accept_error;
  std::unique_ptr<rdma_channel> server;
  std::thread acceptor([&] { server = listener->accept(std::chrono::seconds(10), accept_error); });
  auto ch =
      rdma_channel::connect({addr(), static_cast<std::uint16_t>(listener->port())}, big, error);
  acceptor.join();
  REQUIRE_MESSAGE(ch, error);
  REQUIRE(!ch->notes().empty());
  // soft-RoCE allows more work requests than completion queue entries: the
  // send queue ends up limited by the one completion queue both share.
  MESSAGE(ch->notes()[0]);
  CHECK(ch->notes()[0].find("clamped") != std::string::npos);
  CHECK(ch->protocol().parameters().sq_size < (1u << 20));
}
