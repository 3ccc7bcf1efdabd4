// Opening channels without knowing their fabric: connect to a peer, or
// listen and accept, over verbs or tcp as the options say.
#pragma once

#include <riomesh/channels/channel.hpp>
#include <riomesh/config/settings.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace riomesh::channels {

namespace verbs {
class memory_domain;
}

struct channel_options {
  // verbs or tcp; automatic asks the device probe (choose_fabric).
  config::fabric_kind fabric = config::fabric_kind::automatic;
  std::string device;  // verbs: the RDMA device the address must route to
  config::channel_settings settings;
  std::chrono::milliseconds timeout{5000};  // address, route and connection setup
  // verbs: speak rsockets exactly as librdmacm does (for rsocket peers):
  // rsockets' iomap credit accounting, and iomap slots only as configured.
  bool plain_rsocket = false;
  // A riomesh node's connection: the peer may map or place only once the
  // session is authenticated (channel::authorize). from() sets it.
  bool gated = false;
  // verbs: the node's memory domain, shared by its connections; null: each
  // connection has its own. from() makes one.
  std::shared_ptr<verbs::memory_domain> memory;

  static channel_options from(const config::settings& s);
};

class listener {
 public:
  virtual ~listener() = default;
  // Readable when a connection request waits.
  virtual int fd() const = 0;
  virtual std::uint16_t port() const = 0;
  // Waits up to `timeout` for one connection; empty with `error` set.
  virtual std::unique_ptr<channel> accept(std::chrono::milliseconds timeout,
                                          std::string& error) = 0;
  // Turns one waiting request away before it becomes a connection (rdma:
  // rejected, so an rsocket's rconnect fails with ECONNREFUSED; tcp: closed
  // on accept). False when none waits; `peer` names the one refused.
  virtual bool refuse(std::string& peer) = 0;
};

// Empty with `error` set (naming the address) on failure.
std::unique_ptr<channel> connect(const config::endpoint& to, const channel_options& opt,
                                 std::string& error);
std::unique_ptr<listener> listen(const config::endpoint& at, const channel_options& opt,
                                 std::string& error);

}  // namespace riomesh::channels
