#include "channel_kind.hpp"

#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace riomesh::test {
namespace {

using namespace channels::verbs;

// The address of the soft-RoCE device in the test VM (tools/vm-run.sh).
std::string device_address() {
  const char* a = std::getenv("RIOMESH_RDMA_ADDR");
  return a && *a ? a : "10.77.0.1";
}

// RIOMESH_MEMORY_DOMAIN=shared: each side's connections share one memory
// domain, as a node's do (windows over what they expose), and its
// completion queues, as a node's do with memory.shared_cq_from set, driven
// from the tests' threads (the queue's own thread takes its signals);
// otherwise each connection has its own, as raw sockets do.
rdma_params params() {
  rdma_params p;
  p.engine.iomap_slots = 16;  // room for the peer's maps
  const char* d = std::getenv("RIOMESH_MEMORY_DOMAIN");
  if (d && std::string{d} == "shared") {
    memory_limits all_shared;
    all_shared.shared_cq_from = 1;
    static auto domain = std::make_shared<memory_domain>(all_shared);
    p.domain = domain;
  }
  return p;
}

class rdma : public channel_kind {
 public:
  const char* name() const override { return "rdma"; }
  std::string listen() override {
    std::string error;
    auto address = listen_address(device_address());
    listener_ = rdma_listener::listen({address, 0}, params(), error);
    if (!listener_)
      std::fprintf(stderr, "rdma listen: %s\n", error.c_str());
    return address + ":" + (listener_ ? std::to_string(listener_->port()) : "0");
  }
  std::unique_ptr<channels::channel> accept(std::chrono::milliseconds timeout) override {
    std::string error;
    auto ch = listener_ ? listener_->accept(timeout, error) : nullptr;
    if (!ch)
      std::fprintf(stderr, "rdma accept: %s\n", error.c_str());
    return ch;
  }
  std::unique_ptr<channels::channel> connect(const std::string& where) override {
    std::string error;
    auto at = parse_where(where);
    auto ch = rdma_channel::connect({at.address, at.port}, params(), error);
    if (!ch)
      std::fprintf(stderr, "rdma connect: %s\n", error.c_str());
    return ch;
  }

 private:
  std::unique_ptr<rdma_listener> listener_;
};

}  // namespace

std::unique_ptr<channel_kind> rdma_kind() {
  return std::make_unique<rdma>();
}

}  // namespace riomesh::test
