#include "channel_kind.hpp"

#include <riomesh/channels/tcp/tcp_channel.hpp>

#include <cstdlib>
#include <string>

#include <poll.h>
#include <unistd.h>

namespace riomesh::test {
namespace {

using namespace channels::tcp;

class tcp : public channel_kind {
 public:
  ~tcp() override {
    if (listener_ >= 0)
      ::close(listener_);
  }
  const char* name() const override { return "tcp"; }
  std::string listen() override {
    auto address = listen_address("127.0.0.1");
    auto s = listen_on({address, 0});
    listener_ = s.fd;
    return address + ":" + std::to_string(local_port(s.fd));
  }
  std::unique_ptr<channels::channel> accept(std::chrono::milliseconds timeout) override {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1)
      return nullptr;
    auto s = accept_from(listener_, {});
    if (s.fd < 0)
      return nullptr;
    return std::make_unique<tcp_channel>(s.fd, s.peer, tcp_params{});
  }
  std::unique_ptr<channels::channel> connect(const std::string& where) override {
    std::string error;
    auto at = parse_where(where);
    return tcp_channel::connect({at.address, at.port}, {}, {}, error);
  }

 private:
  int listener_ = -1;
};

}  // namespace

std::unique_ptr<channel_kind> tcp_kind() {
  return std::make_unique<tcp>();
}

std::string listen_address(const std::string& fallback) {
  const char* a = std::getenv("RIOMESH_CONTRACT_ADDR");
  return a && *a ? a : fallback;
}

where_to parse_where(const std::string& where) {
  auto colon = where.rfind(':');
  return {where.substr(0, colon), static_cast<std::uint16_t>(std::stoi(where.substr(colon + 1)))};
}

std::unique_ptr<channel_kind> kind_under_test() {
  const char* which = std::getenv("RIOMESH_CHANNEL");
  if (which && std::string{which} == "rdma")
    return rdma_kind();
  return tcp_kind();
}

}  // namespace riomesh::test
