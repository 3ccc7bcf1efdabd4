// The property scenarios on real verbs: two rdma channels connected through
// rdma_cm over the device at RIOMESH_RDMA_ADDR (the VM's soft-RoCE), their
// engines driven directly as on the simulated fabric.
#pragma once

#include <link.hpp>

#include <memory>

namespace riomesh::property {

// Connects the pair; throws std::runtime_error with rdma_cm's reason. Odd
// seeds put both sides in one memory domain (one protection domain, memory
// windows), even ones give each its own.
std::unique_ptr<sim::engine_link> over_verbs(const sim::side_config& a, const sim::side_config& b,
                                             std::uint64_t seed);

}  // namespace riomesh::property
