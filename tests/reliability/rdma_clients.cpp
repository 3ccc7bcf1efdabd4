#include "rdma_clients.hpp"

#include <riomesh/channels/wire/conn_data.hpp>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>

namespace riomesh::test {
namespace {

using clock_type = std::chrono::steady_clock;

addrinfo* resolve(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* ai = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &ai) != 0)
    return nullptr;
  return ai;
}

// The next event of `ch` within `ms`, acknowledged; its type, or -1.
int next_event(rdma_event_channel* ch, int ms) {
  pollfd p{ch->fd, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1)
    return -1;
  rdma_cm_event* ev = nullptr;
  if (rdma_get_cm_event(ch, &ev) != 0)
    return -1;
  int type = ev->event;
  rdma_ack_cm_event(ev);
  return type;
}

// An rsocket connecting to host:port, blocking or not: once rconnect has
// returned (connected, or for a non-blocking one under way), or -1.
int open_rsocket(const std::string& host, std::uint16_t port, bool nonblocking) {
  addrinfo* ai = resolve(host, port);
  if (!ai)
    return -1;
  int fd = rsocket(ai->ai_family, SOCK_STREAM, 0);
  if (fd >= 0 && ((nonblocking && rfcntl(fd, F_SETFL, O_NONBLOCK) != 0) ||
                  (rconnect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
                   !(nonblocking && errno == EINPROGRESS)))) {
    rclose(fd);
    fd = -1;
  }
  ::freeaddrinfo(ai);
  return fd;
}

}  // namespace

int rsocket_dial(const std::string& host, std::uint16_t port) {
  return open_rsocket(host, port, false);
}

int rsocket_start_dial(const std::string& host, std::uint16_t port) {
  return open_rsocket(host, port, true);
}

int rsocket_dial_nonblocking(const std::string& host, std::uint16_t port,
                             std::chrono::milliseconds limit) {
  int fd = rsocket_start_dial(host, port);
  if (fd < 0)
    return -1;
  // rpoll reports POLLOUT once the connect is over, either way; SO_ERROR
  // says which.
  pollfd p{fd, POLLOUT, 0};
  int err = 0;
  socklen_t len = sizeof err;
  if (rpoll(&p, 1, static_cast<int>(limit.count())) != 1 ||
      rgetsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    rclose(fd);
    return -1;
  }
  return fd;
}

void rsocket_close(int fd) {
  if (fd >= 0)
    rclose(fd);
}

bool rsocket_send_all(int fd, const std::vector<unsigned char>& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    auto n = rsend(fd, bytes.data() + sent, bytes.size() - sent, 0);
    if (n <= 0)
      return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

long rsocket_read_to_end(int fd) {
  char chunk[4096];
  long total = 0;
  for (;;) {
    auto n = rrecv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLIN, 0};
      if (rpoll(&p, 1, -1) < 0)
        return -1;
      continue;
    }
    if (n <= 0)
      return n == 0 ? total : -1;
    total += n;
  }
}

bool returns_within(std::chrono::milliseconds limit, std::function<void()> step) {
  auto done = std::make_shared<std::promise<void>>();
  auto returned = done->get_future();
  std::thread([step = std::move(step), done] {
    step();
    done->set_value();
  }).detach();
  return returned.wait_for(limit) == std::future_status::ready;
}

half_open_client::half_open_client(const std::string& host, std::uint16_t port) {
  addrinfo* ai = resolve(host, port);
  if (!ai)
    throw std::runtime_error("half-open client: cannot resolve " + host);
  ch_ = rdma_create_event_channel();
  std::string failed;
  if (!ch_ || rdma_create_id(ch_, &id_, nullptr, RDMA_PS_TCP) != 0)
    failed = "rdma_create_id";
  else if (rdma_resolve_addr(id_, nullptr, ai->ai_addr, 2000) != 0 ||
           next_event(ch_, 5000) != RDMA_CM_EVENT_ADDR_RESOLVED)
    failed = "address resolution";
  else if (rdma_resolve_route(id_, 2000) != 0 ||
           next_event(ch_, 5000) != RDMA_CM_EVENT_ROUTE_RESOLVED)
    failed = "route resolution";
  ::freeaddrinfo(ai);
  if (failed.empty()) {
    // Connection data an rsocket would send, for buffers that do not exist.
    wire::conn_data cd;
    cd.credits = 64;
    cd.target_sgl = {0x10000, 1, wire::target_sgl_slots};
    cd.data_buf = {0x20000, 1, 64 * 1024};
    auto bytes = wire::encode(cd);
    rdma_conn_param param{};
    param.private_data = bytes.data();
    param.private_data_len = static_cast<std::uint8_t>(bytes.size());
    param.retry_count = 7;
    param.rnr_retry_count = 7;
    // No queue pair on this id: the kernel then leaves the last step (the
    // RTU, through rdma_establish) to us, and we never take it.
    // Each its own number: the CM refuses a request that repeats one.
    static std::atomic<std::uint32_t> next_qp{0x4242};
    param.qp_num = next_qp++;
    if (rdma_connect(id_, &param) != 0)
      failed = "rdma_connect";
  }
  if (!failed.empty()) {
    release();
    throw std::runtime_error("half-open client: " + failed + " failed");
  }
  ::fcntl(ch_->fd, F_SETFL, ::fcntl(ch_->fd, F_GETFL) | O_NONBLOCK);
}

const std::vector<std::string>& half_open_client::events() {
  rdma_cm_event* ev = nullptr;
  while (ch_ && rdma_get_cm_event(ch_, &ev) == 0) {
    events_.push_back(rdma_event_str(ev->event));
    rdma_ack_cm_event(ev);
  }
  return events_;
}

half_open_client::~half_open_client() {
  release();
}

void half_open_client::release() {
  if (ch_)
    ::fcntl(ch_->fd, F_SETFL, ::fcntl(ch_->fd, F_GETFL) | O_NONBLOCK);
  events();  // an id goes only once its events are acknowledged
  if (id_)
    rdma_destroy_id(id_);
  if (ch_)
    rdma_destroy_event_channel(ch_);
  id_ = nullptr;
  ch_ = nullptr;
}

}  // namespace riomesh::test
