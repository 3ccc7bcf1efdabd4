// What `riomesh devices` shows of each RDMA device libibverbs sees: its
// ports (state, link layer, MTU, GIDs) and the limits riomesh meets.
#pragma once

#include <riomesh/channels/fabric_choice.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace riomesh::channels {

struct rdma_port_report {
  int number = 0;
  std::string state;                              // "active", "down", ...
  std::string link_layer;                         // "InfiniBand", "Ethernet"
  int active_mtu = 0;                             // bytes
  std::vector<std::pair<int, std::string>> gids;  // index, address; zero GIDs left out
};

struct rdma_device_report {
  rdma_device device;
  std::string error;  // why it could not be opened or queried, if so
  std::uint64_t max_mr_size = 0;
  int max_qp = 0, max_qp_wr = 0, max_sge = 0, max_cqe = 0, max_mr = 0;
  bool atomics = false;  // remote atomic operations supported
  std::vector<rdma_port_report> ports;
};

std::vector<rdma_device_report> report_rdma_devices();

}  // namespace riomesh::channels
