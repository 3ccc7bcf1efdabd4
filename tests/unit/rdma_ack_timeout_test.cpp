// The queue pair's ACK timeout: 67 ms, or less where the device's eight
// tries at a lost packet would not fit in the peer timeout; never the 2 s
// rdma_cm picks on RoCE, under which soft-RoCE stalled on lossy links.
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <doctest/doctest.h>

#include <chrono>

using riomesh::channels::verbs::rdma_params;
using namespace std::chrono_literals;

namespace {

// What the device waits with exponent n.
std::chrono::nanoseconds wait_of(std::uint8_t n) {
  return std::chrono::nanoseconds(std::int64_t{4096} << n);
}

}  // namespace

TEST_CASE("rdma ACK timeout: eight tries fit in a short peer timeout, the next step up would not") {
  for (auto peer : {150ms, 200ms, 300ms, 500ms}) {
    auto n = rdma_params::ack_timeout_for(peer);
    CAPTURE(peer.count());
    CHECK(8 * wait_of(n) <= peer);
    CHECK(8 * wait_of(n + 1) > peer);
  }
  CHECK(rdma_params::ack_timeout_for(300ms) == 13);  // 33.6 ms
}

TEST_CASE("rdma ACK timeout: 67 ms at most, whatever the peer timeout") {
  for (auto peer : {600ms, 1000ms, 5000ms, 30000ms}) {
    CAPTURE(peer.count());
    CHECK(rdma_params::ack_timeout_for(peer) == 14);  // 67 ms
  }
}

TEST_CASE("rdma ACK timeout: bounded both ways, none without a peer timeout") {
  CHECK(rdma_params::ack_timeout_for(0ms) == 0);
  CHECK(rdma_params::ack_timeout_for(1ms) == 12);                     // 16.8 ms: no lower
  CHECK(rdma_params::ack_timeout_for(std::chrono::hours(24)) == 14);  // 67 ms: no higher
}
