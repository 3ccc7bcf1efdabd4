#include "devices_command.hpp"

#include "arguments.hpp"

#include <riomesh/channels/device_report.hpp>
#include <riomesh/config/loader.hpp>
#include <riomesh/config/units.hpp>

#include <cstdio>
#include <iostream>

namespace riomesh::cli {

const char* const devices_usage =
    "  devices [--config FILE]\n"
    "                       the RDMA devices here: ports, state, MTU, GIDs, limits; and the\n"
    "                       fabric a node would use (FILE's node section: fabric, device)\n";

int devices_command(const config::command_line& cmd) {
  if (cmd.positional.size() != 1)
    throw usage_error("takes no other words");
  config::node_settings node;
  if (cmd.has("--config")) {
    try {
      node = config::load_file(cmd.get("--config"), cmd.extra).node;
    } catch (const config::error& e) {
      throw usage_error("--config " + cmd.get("--config") + ":\n" + e.what());
    }
  } else {
    try {
      node = config::apply(cmd.extra, config::settings{}).node;
    } catch (const config::error& e) {
      throw usage_error(e.what());
    }
  }
  auto reports = channels::report_rdma_devices();
  if (reports.empty())
    std::cout << "no RDMA devices (libibverbs sees none: no RDMA driver in this kernel, or no "
                 "device)\n";
  std::vector<channels::rdma_device> devices;
  for (const auto& r : reports) {
    devices.push_back(r.device);
    std::printf("%s: %s%s\n", r.device.name.c_str(), channels::to_string(r.device.transport),
                r.device.writes_with_immediate() ? "" : " (no write with immediate: unusable)");
    if (!r.error.empty()) {
      std::printf("  %s\n", r.error.c_str());
      continue;
    }
    std::printf(
        "  limits: %d queue pairs of up to %d work requests, %d SGEs each; %d CQ "
        "entries; %d memory regions of up to %s; atomics %s\n",
        r.max_qp, r.max_qp_wr, r.max_sge, r.max_cqe, r.max_mr,
        r.max_mr_size >= (1ull << 62) ? "any size"
                                      : config::approximate_size(double(r.max_mr_size)).c_str(),
        r.atomics ? "yes" : "no");
    for (const auto& p : r.ports) {
      std::printf("  port %d: %s, %s, MTU %d\n", p.number, p.state.c_str(), p.link_layer.c_str(),
                  p.active_mtu);
      for (const auto& [index, gid] : p.gids)
        std::printf("    GID %d: %s\n", index, gid.c_str());
    }
  }
  auto choice = channels::choose_fabric(node, devices);
  std::cout << "a node" << (cmd.has("--config") ? " of " + cmd.get("--config") : std::string{})
            << " would use: " << (choice.ok ? "" : "nothing, it cannot start: ") << choice.reason
            << "\n";
  return choice.ok ? 0 : 1;
}

}  // namespace riomesh::cli
