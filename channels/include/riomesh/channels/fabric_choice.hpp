// Which fabric a node uses: verbs when an RDMA device that can write with
// immediate data has an active port, TCP otherwise (or when asked for).
#pragma once

#include <riomesh/config/settings.hpp>

#include <string>
#include <vector>

namespace riomesh::channels {

enum class rdma_transport { infiniband, roce, iwarp, other };

// What the probe saw of one RDMA device.
struct rdma_device {
  std::string name;
  rdma_transport transport = rdma_transport::other;
  int active_port = 0;  // first ACTIVE port, 0 if none

  // The rsocket protocol signals data with RDMA WRITE WITH IMMEDIATE, which
  // only the InfiniBand transport (IB and RoCE) has; iWARP (siw) does not.
  bool writes_with_immediate() const {
    return transport == rdma_transport::infiniband || transport == rdma_transport::roce;
  }
};

struct fabric_decision {
  bool ok = true;  // false: the requested fabric cannot be had; `reason` says why
  config::fabric_kind fabric = config::fabric_kind::tcp;  // verbs or tcp, never automatic
  std::string device;                                     // the RDMA device, for verbs
  int port = 0;
  std::string reason;
};

// Lists the RDMA devices libibverbs sees (none on a host without RDMA).
std::vector<rdma_device> probe_rdma_devices();

// Pure: decides from the node's settings and a device list.
fabric_decision choose_fabric(const config::node_settings& node,
                              const std::vector<rdma_device>& devices);

const char* to_string(rdma_transport value);

}  // namespace riomesh::channels
