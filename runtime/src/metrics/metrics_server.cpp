#include "metrics_server.hpp"

#include <riomesh/config/address.hpp>

#include <httplib.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace riomesh::detail {
namespace {

// Scrapes are rare and small: two threads, and nothing large read.
constexpr std::size_t server_threads = 2;
constexpr std::size_t max_request_body = 4096;

// Why binding `at` fails, as the system says it (cpp-httplib does not).
std::string bind_problem(const config::endpoint& at) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  auto port = std::to_string(at.port);
  if (int rc = getaddrinfo(at.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return gai_strerror(rc);
  std::string why = "unknown";
  int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd < 0) {
    why = std::strerror(errno);
  } else {
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0)
      why = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  return why;
}

void answer(httplib::Response& res, const std::string& problem) {
  res.status = problem.empty() ? 200 : 503;
  res.set_content(problem.empty() ? "ok\n" : problem + "\n", "text/plain; charset=utf-8");
}

}  // namespace

metrics_server::metrics_server(const config::endpoint& at, metrics_handlers handlers)
    : server_(std::make_unique<httplib::Server>()), handlers_(std::move(handlers)) {
  auto& s = *server_;
  s.new_task_queue = [] { return new httplib::ThreadPool(server_threads); };
  // cpp-httplib's default adds SO_REUSEPORT, which would let a second
  // node bind the same port and take half the scrapes: a restart needs
  // SO_REUSEADDR only.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  s.set_payload_max_length(max_request_body);
  s.set_read_timeout(5);
  s.set_write_timeout(5);
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    if (auto text = handlers_.metrics()) {
      res.set_content(std::move(*text), "text/plain; version=0.0.4; charset=utf-8");
    } else {
      res.status = 503;
      res.set_content("the node did not report its figures in time\n", "text/plain");
    }
  });
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    answer(res, handlers_.alive());
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    answer(res, handlers_.ready());
  });
  if (at.port == 0) {
    int p = s.bind_to_any_port(at.host);
    if (p > 0)
      port_ = static_cast<std::uint16_t>(p);
  } else if (s.bind_to_port(at.host, at.port)) {
    port_ = at.port;
  }
  if (port_ == 0)
    throw std::runtime_error("node.metrics: cannot listen on " + config::to_string(at) + ": " +
                             bind_problem(at));
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Running before the constructor returns: a stop() before that would be
  // missed, and the destructor would wait for good.
  while (!server_->is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

metrics_server::~metrics_server() {
  server_->stop();
  if (thread_.joinable())
    thread_.join();
}

}  // namespace riomesh::detail
