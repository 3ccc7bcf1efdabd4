#include <riomesh/channels/fabric_choice.hpp>
#include <riomesh/channels/listener.hpp>
#include <riomesh/channels/tcp/tcp_channel.hpp>
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <poll.h>
#include <unistd.h>

namespace riomesh::channels {
namespace {

// verbs or tcp, asking the device probe when the options leave it open.
bool pick_fabric(const channel_options& opt, config::fabric_kind& out, std::string& error) {
  if (opt.fabric != config::fabric_kind::automatic) {
    out = opt.fabric;
    return true;
  }
  config::node_settings node;
  node.fabric = opt.fabric;
  node.device = opt.device;
  auto d = choose_fabric(node, probe_rdma_devices());
  if (!d.ok)
    error = d.reason;
  out = d.fabric;
  return d.ok;
}

verbs::rdma_params rdma_params_of(const channel_options& opt) {
  auto p = verbs::rdma_params::from(opt.settings);
  p.device = opt.device;
  p.timeout_ms = static_cast<int>(opt.timeout.count());
  p.engine.iomap_credit = !opt.plain_rsocket;
  // A node's connections (gated) let each side read and run atomics on
  // what the other lends it; everything else speaks as rsockets do.
  p.read_depth = opt.gated && !opt.plain_rsocket ? opt.settings.read_depth : 0;
  p.domain = opt.memory;
  return p;
}

tcp::tcp_params tcp_params_of(const channel_options& opt) {
  auto p = tcp::tcp_params::from(opt.settings);
  p.gated = opt.gated;
  return p;
}

tcp::socket_options socket_options_of(const channel_options& /*opt*/) {
  // The kernel sizes the socket's buffers itself: fixing them (as
  // channel.send_buffer once did) turns its autotuning off, and a 1 MiB
  // stream then took 10 system calls per message instead of 1 (0.6x the
  // rate). send_buffer and recv_buffer bound riomesh's own copies.
  return {};
}

class rdma_listener final : public listener {
 public:
  explicit rdma_listener(std::unique_ptr<verbs::rdma_listener> l) : l_(std::move(l)) {}
  int fd() const override { return l_->fd(); }
  std::uint16_t port() const override { return static_cast<std::uint16_t>(l_->port()); }
  std::unique_ptr<channel> accept(std::chrono::milliseconds timeout, std::string& error) override {
    return l_->accept(timeout, error);
  }
  bool refuse(std::string& peer) override { return l_->refuse(peer); }

 private:
  std::unique_ptr<verbs::rdma_listener> l_;
};

class tcp_listener final : public listener {
 public:
  tcp_listener(int fd, const channel_options& opt) : fd_(fd), opt_(opt) {}
  ~tcp_listener() override { ::close(fd_); }
  int fd() const override { return fd_; }
  std::uint16_t port() const override { return static_cast<std::uint16_t>(tcp::local_port(fd_)); }
  std::unique_ptr<channel> accept(std::chrono::milliseconds timeout, std::string& error) override {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) {
      error = "no connection request within " + std::to_string(timeout.count()) + " ms";
      return nullptr;
    }
    auto s = tcp::accept_from(fd_, socket_options_of(opt_));
    if (s.fd < 0) {
      error = s.error.empty() ? "the connection request went away" : s.error;
      return nullptr;
    }
    return std::make_unique<tcp::tcp_channel>(s.fd, s.peer, tcp_params_of(opt_));
  }
  bool refuse(std::string& peer) override {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 1)
      return false;
    auto s = tcp::accept_from(fd_, socket_options_of(opt_));
    if (s.fd < 0)
      return false;
    ::close(s.fd);
    peer = s.peer;
    return true;
  }

 private:
  int fd_;
  channel_options opt_;
};

}  // namespace

channel_options channel_options::from(const config::settings& s) {
  channel_options o;
  o.fabric = s.node.fabric;
  o.device = s.node.device;
  o.settings = s.channel;
  o.gated = true;
  verbs::memory_limits m;
  m.max_pinned = s.memory.max_pinned;
  m.cache.entries = s.memory.cache_entries;
  m.cache.bytes = s.memory.cache_bytes;
  m.shared_cq_from = s.memory.shared_cq_from;
  o.memory = std::make_shared<verbs::memory_domain>(m);
  return o;
}

std::unique_ptr<channel> connect(const config::endpoint& to, const channel_options& opt,
                                 std::string& error) {
  config::fabric_kind fabric{};
  if (!pick_fabric(opt, fabric, error))
    return nullptr;
  if (fabric == config::fabric_kind::verbs)
    return verbs::rdma_channel::connect(to, rdma_params_of(opt), error);
  return tcp::tcp_channel::connect(to, tcp_params_of(opt), socket_options_of(opt), error);
}

std::unique_ptr<listener> listen(const config::endpoint& at, const channel_options& opt,
                                 std::string& error) {
  config::fabric_kind fabric{};
  if (!pick_fabric(opt, fabric, error))
    return nullptr;
  if (fabric == config::fabric_kind::verbs) {
    auto l = verbs::rdma_listener::listen(at, rdma_params_of(opt), error);
    return l ? std::make_unique<rdma_listener>(std::move(l)) : nullptr;
  }
  auto s = tcp::listen_on(at);
  if (s.fd < 0) {
    error = s.error;
    return nullptr;
  }
  return std::make_unique<tcp_listener>(s.fd, opt);
}

}  // namespace riomesh::channels
