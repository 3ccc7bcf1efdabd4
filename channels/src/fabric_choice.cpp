#include <riomesh/channels/fabric_choice.hpp>

namespace riomesh::channels {
namespace {

// Empty when the device can carry the rsocket protocol, else why not.
std::string unusable(const rdma_device& d) {
  if (!d.writes_with_immediate())
    return d.name + " is " + to_string(d.transport) +
           ", which has no RDMA write with immediate data (rsockets needs it)";
  if (d.active_port == 0)
    return d.name + " has no active port";
  return {};
}

fabric_decision use(const rdma_device& d, std::string why) {
  return {true, config::fabric_kind::verbs, d.name, d.active_port,
          why + ": " + d.name + " (" + to_string(d.transport) + ", port " +
              std::to_string(d.active_port) + ")"};
}

fabric_decision tcp(std::string why) {
  return {true, config::fabric_kind::tcp, {}, 0, std::move(why)};
}

fabric_decision fail(std::string why) {
  return {false, config::fabric_kind::verbs, {}, 0, std::move(why)};
}

}  // namespace

fabric_decision choose_fabric(const config::node_settings& node,
                              const std::vector<rdma_device>& devices) {
  using config::fabric_kind;
  if (node.fabric == fabric_kind::tcp)
    return tcp("tcp: requested by node.fabric");
  bool required = node.fabric == fabric_kind::verbs;
  auto fallback = [&](const std::string& why) {
    return required ? fail("verbs requested, but " + why) : tcp("tcp: " + why);
  };
  if (!node.device.empty()) {
    for (const auto& d : devices) {
      if (d.name != node.device)
        continue;
      auto problem = unusable(d);
      return problem.empty() ? use(d, "verbs: node.device") : fallback(problem);
    }
    return fallback("no RDMA device named '" + node.device + "'");
  }
  std::string skipped;
  for (const auto& d : devices) {
    auto problem = unusable(d);
    if (problem.empty())
      return use(d, required ? "verbs: requested" : "verbs: best fabric found");
    skipped += (skipped.empty() ? "" : "; ") + problem;
  }
  return fallback(devices.empty() ? "no RDMA device found" : skipped);
}

const char* to_string(rdma_transport value) {
  switch (value) {
    case rdma_transport::infiniband:
      return "InfiniBand";
    case rdma_transport::roce:
      return "RoCE";
    case rdma_transport::iwarp:
      return "iWARP";
    default:
      return "an unknown transport";
  }
}

}  // namespace riomesh::channels
