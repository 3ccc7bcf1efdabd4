#include "channel_pair.hpp"

#include <riomesh/channels/tcp/tcp_channel.hpp>
#include <riomesh/channels/tcp/tcp_socket.hpp>
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <future>
#include <string>

namespace riomesh::test {
namespace {

bool use_rdma() {
  const char* kind = std::getenv("RIOMESH_CHANNEL");
  return kind && std::string{kind} == "rdma";
}

std::pair<channel_ptr, channel_ptr> tcp_pair() {
  using namespace channels::tcp;
  auto l = listen_on({"127.0.0.1", 0});
  REQUIRE_MESSAGE(l.fd >= 0, l.error);
  auto port = static_cast<std::uint16_t>(local_port(l.fd));
  std::string error;
  channel_ptr a = tcp_channel::connect({"127.0.0.1", port}, {}, {}, error);
  REQUIRE_MESSAGE(static_cast<bool>(a), error);
  pollfd p{l.fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  auto s = accept_from(l.fd, {});
  REQUIRE(s.fd >= 0);
  channel_ptr b = std::make_shared<tcp_channel>(s.fd, s.peer, tcp_params{});
  ::close(l.fd);
  return {a, b};
}

std::pair<channel_ptr, channel_ptr> rdma_pair() {
  using namespace channels::verbs;
  const char* env = std::getenv("RIOMESH_RDMA_ADDR");
  std::string addr = env && *env ? env : "10.77.0.1";
  auto params = rdma_params::from(config::channel_settings{});
  std::string error;
  auto listener = rdma_listener::listen({addr, 0}, params, error);
  REQUIRE_MESSAGE(static_cast<bool>(listener), error);
  config::endpoint to{addr, static_cast<std::uint16_t>(listener->port())};
  // connect() returns once established, which needs the accept: a thread.
  auto active = std::async(std::launch::async, [&] {
    std::string e;
    auto ch = rdma_channel::connect(to, params, e);
    return std::make_pair(std::shared_ptr<rdma_channel>(std::move(ch)), e);
  });
  channel_ptr b = listener->accept(std::chrono::seconds(20), error);
  auto [a, connect_error] = active.get();
  REQUIRE_MESSAGE(static_cast<bool>(a), connect_error);
  REQUIRE_MESSAGE(static_cast<bool>(b), error);
  return {a, b};
}

}  // namespace

std::pair<channel_ptr, channel_ptr> channel_pair() {
  return use_rdma() ? rdma_pair() : tcp_pair();
}

const char* channel_pair_kind() {
  return use_rdma() ? "rdma" : "tcp";
}

}  // namespace riomesh::test
