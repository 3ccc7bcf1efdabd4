#include <riomesh/channels/device_report.hpp>

#include <infiniband/verbs.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

namespace riomesh::channels {
namespace {

const char* state_name(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_ACTIVE:
      return "active";
    case IBV_PORT_DOWN:
      return "down";
    case IBV_PORT_INIT:
      return "init";
    case IBV_PORT_ARMED:
      return "armed";
    case IBV_PORT_ACTIVE_DEFER:
      return "active (deferred)";
    default:
      return "unknown";
  }
}

int mtu_bytes(ibv_mtu m) {
  switch (m) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
  }
  return 0;
}

rdma_port_report port_report(ibv_context* ctx, int number) {
  rdma_port_report out;
  out.number = number;
  ibv_port_attr pa{};
  if (ibv_query_port(ctx, static_cast<uint8_t>(number), &pa) != 0) {
    out.state = std::string{"cannot query: "} + std::strerror(errno);
    return out;
  }
  out.state = state_name(pa.state);
  out.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  out.active_mtu = mtu_bytes(pa.active_mtu);
  for (int i = 0; i < pa.gid_tbl_len && i < 256; ++i) {
    ibv_gid gid{};
    if (ibv_query_gid(ctx, static_cast<uint8_t>(number), i, &gid) != 0)
      continue;
    bool zero = true;
    for (auto b : gid.raw)
      zero = zero && b == 0;
    if (zero)
      continue;
    char text[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, gid.raw, text, sizeof text);
    out.gids.emplace_back(i, text);
  }
  return out;
}

}  // namespace

std::vector<rdma_device_report> report_rdma_devices() {
  std::vector<rdma_device_report> out;
  auto devices = probe_rdma_devices();
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  for (int i = 0; list && i < count; ++i) {
    rdma_device_report r;
    for (const auto& d : devices)
      if (d.name == ibv_get_device_name(list[i]))
        r.device = d;
    ibv_context* ctx = ibv_open_device(list[i]);
    if (!ctx) {
      r.error = std::string{"cannot open: "} + std::strerror(errno);
      out.push_back(std::move(r));
      continue;
    }
    ibv_device_attr attr{};
    if (ibv_query_device(ctx, &attr) == 0) {
      r.max_mr_size = attr.max_mr_size;
      r.max_qp = attr.max_qp;
      r.max_qp_wr = attr.max_qp_wr;
      r.max_sge = attr.max_sge;
      r.max_cqe = attr.max_cqe;
      r.max_mr = attr.max_mr;
      r.atomics = attr.atomic_cap != IBV_ATOMIC_NONE;
      for (int port = 1; port <= attr.phys_port_cnt; ++port)
        r.ports.push_back(port_report(ctx, port));
    } else {
      r.error = std::string{"cannot query: "} + std::strerror(errno);
    }
    ibv_close_device(ctx);
    out.push_back(std::move(r));
  }
  if (list)
    ibv_free_device_list(list);
  return out;
}

}  // namespace riomesh::channels
