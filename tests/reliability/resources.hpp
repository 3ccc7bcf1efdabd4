// What a lost connection must give back: this process's descriptors, and
// memory registrations on RDMA devices (counted by the kernel through
// iproute2's `rdma` tool, not by our own bookkeeping; device-wide, so in
// the VM, where the test's processes are the device's only users).
#pragma once

#include <cstddef>
#include <string>

namespace riomesh::test {

std::size_t open_descriptors();
// On every RDMA device; -1 where it cannot be known (no `rdma` tool, no
// device).
long memory_registrations();
// "fds N, mrs M", for messages.
std::string resources_text();

}  // namespace riomesh::test
