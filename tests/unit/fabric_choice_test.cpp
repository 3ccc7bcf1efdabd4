#include <riomesh/channels/fabric_choice.hpp>

#include <doctest/doctest.h>

using namespace riomesh;
using channels::rdma_device;
using channels::rdma_transport;
using config::fabric_kind;

namespace {

config::node_settings node(fabric_kind fabric, std::string device = {}) {
  config::node_settings n;
  n.fabric = fabric;
  n.device = std::move(device);
  return n;
}

const rdma_device rxe{"rxe0", rdma_transport::roce, 1};
const rdma_device siw{"siw0", rdma_transport::iwarp, 1};
const rdma_device down{"mlx5_0", rdma_transport::infiniband, 0};

}  // namespace

TEST_CASE("auto picks verbs only with a usable device") {
  auto d = channels::choose_fabric(node(fabric_kind::automatic), {siw, down, rxe});
  CHECK(d.ok);
  CHECK(d.fabric == fabric_kind::verbs);
  CHECK(d.device == "rxe0");
  CHECK(d.port == 1);
  CHECK(d.reason == "verbs: best fabric found: rxe0 (RoCE, port 1)");

  d = channels::choose_fabric(node(fabric_kind::automatic), {});
  CHECK(d.ok);
  CHECK(d.fabric == fabric_kind::tcp);
  CHECK(d.reason == "tcp: no RDMA device found");
}

TEST_CASE("auto explains each device it skipped") {
  auto d = channels::choose_fabric(node(fabric_kind::automatic), {siw, down});
  CHECK(d.fabric == fabric_kind::tcp);
  CHECK(d.reason ==
        "tcp: siw0 is iWARP, which has no RDMA write with immediate data (rsockets needs "
        "it); mlx5_0 has no active port");
}

TEST_CASE("verbs requested but not available is an error, not a fallback") {
  auto d = channels::choose_fabric(node(fabric_kind::verbs), {});
  CHECK_FALSE(d.ok);
  CHECK(d.reason == "verbs requested, but no RDMA device found");
  d = channels::choose_fabric(node(fabric_kind::verbs, "siw0"), {siw, rxe});
  CHECK_FALSE(d.ok);
  CHECK(d.reason ==
        "verbs requested, but siw0 is iWARP, which has no RDMA write with immediate data "
        "(rsockets needs it)");
  d = channels::choose_fabric(node(fabric_kind::verbs, "mlx9"), {rxe});
  CHECK_FALSE(d.ok);
  CHECK(d.reason == "verbs requested, but no RDMA device named 'mlx9'");
}

TEST_CASE("a named device is used when usable, tcp when asked") {
  auto d = channels::choose_fabric(node(fabric_kind::verbs, "rxe0"), {siw, rxe});
  CHECK(d.ok);
  CHECK(d.device == "rxe0");
  d = channels::choose_fabric(node(fabric_kind::tcp), {rxe});
  CHECK(d.fabric == fabric_kind::tcp);
  CHECK(d.reason == "tcp: requested by node.fabric");
}

TEST_CASE("the probe runs on a host without RDMA") {
  // No assertion on the count: a host may or may not have devices. It must
  // not crash, and every device it reports has a name.
  for (const auto& d : channels::probe_rdma_devices())
    CHECK_FALSE(d.name.empty());
}
