// What a process holds that a lost connection must give back: descriptors,
// and memory registrations on RDMA devices (counted by the kernel, through
// rdma-core's `rdma` tool, not by our own bookkeeping).
#pragma once

#include <cstddef>
#include <string>

namespace riomesh::test {

std::size_t open_descriptors();
// -1 where it cannot be known (no `rdma` tool, or no device).
long memory_registrations();
// "fds N, mrs M", for messages.
std::string resources_text();

}  // namespace riomesh::test
