// What a lost connection must give back: this process's descriptors, and
// memory registrations on RDMA devices (counted by the kernel through
// iproute2's `rdma` tool, not by our own bookkeeping; device-wide, so in
// the VM, where the test's processes are the device's only users).
#pragma once

#include <cstddef>
#include <string>

namespace riomesh::test {

std::size_t open_descriptors();
// "fd=target ..." for each, to name a leaked one.
std::string descriptor_list();
// On every RDMA device; -1 where it cannot be known (no `rdma` tool, no
// device).
long memory_registrations();
// The same count for another kind of resource: "qp", "cm_id", "cq", "pd".
long rdma_resources(const std::string& kind);
// "fds N, mrs M", for messages.
std::string resources_text();

}  // namespace riomesh::test
