// The node's HTTP endpoint for operators (node.metrics): /metrics in
// Prometheus's text format, /healthz (the node answers) and /readyz (it is
// connected to every configured peer). A thin shell over cpp-httplib: the
// figures come from the callbacks, which ask the node's actors.
#pragma once

#include <riomesh/config/settings.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace riomesh::detail {

struct metrics_handlers {
  // The exposition text; nullopt: the node did not answer in time.
  std::function<std::optional<std::string>()> metrics;
  // Empty: alive / ready; otherwise why not (one line).
  std::function<std::string()> alive;
  std::function<std::string()> ready;
};

class metrics_server {
 public:
  // Listens at once; throws std::runtime_error naming the address if it
  // cannot. Port 0: any free port (port()).
  metrics_server(const config::endpoint& at, metrics_handlers handlers);
  ~metrics_server();

  metrics_server(const metrics_server&) = delete;
  metrics_server& operator=(const metrics_server&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  metrics_handlers handlers_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace riomesh::detail
