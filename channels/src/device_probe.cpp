// The one place issue-2-era code touches libibverbs: listing devices.
#include <riomesh/channels/fabric_choice.hpp>

#include <infiniband/verbs.h>

namespace riomesh::channels {
namespace {

rdma_device describe(ibv_device* dev) {
  rdma_device out;
  out.name = ibv_get_device_name(dev);
  bool iwarp = dev->transport_type == IBV_TRANSPORT_IWARP;
  out.transport = iwarp ? rdma_transport::iwarp : rdma_transport::other;
  ibv_context* ctx = ibv_open_device(dev);
  if (!ctx)
    return out;
  ibv_device_attr attr{};
  if (ibv_query_device(ctx, &attr) == 0) {
    for (int port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr pa{};
      if (ibv_query_port(ctx, static_cast<uint8_t>(port), &pa) != 0)
        continue;
      if (!iwarp && dev->transport_type == IBV_TRANSPORT_IB)
        out.transport = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? rdma_transport::roce
                                                                 : rdma_transport::infiniband;
      if (pa.state == IBV_PORT_ACTIVE) {
        out.active_port = port;
        break;
      }
    }
  }
  ibv_close_device(ctx);
  return out;
}

}  // namespace

std::vector<rdma_device> probe_rdma_devices() {
  std::vector<rdma_device> out;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (!list)
    return out;  // no RDMA support in this kernel at all
  for (int i = 0; i < count; ++i)
    out.push_back(describe(list[i]));
  ibv_free_device_list(list);
  return out;
}

}  // namespace riomesh::channels
