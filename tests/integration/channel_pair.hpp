// Two connected channels in one process: tcp over loopback, or rdma over
// the VM's soft-RoCE device when RIOMESH_CHANNEL=rdma (tools/vm-run.sh).
#pragma once

#include <riomesh/channels/channel.hpp>

#include <memory>
#include <tuple>
#include <utility>

namespace riomesh::test {

using channel_ptr = std::shared_ptr<channels::channel>;

// Fails the current test if the pair cannot be made.
std::pair<channel_ptr, channel_ptr> channel_pair();

// The same, as a fixture: the two ends of one connection.
struct linked_channels {
  channel_ptr a, b;
  linked_channels() { std::tie(a, b) = channel_pair(); }
};
const char* channel_pair_kind();

}  // namespace riomesh::test
