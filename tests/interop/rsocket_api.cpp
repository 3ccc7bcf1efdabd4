// peer_api on librdmacm's rsocket API: the reference implementation.
#include "peer_api.hpp"

#include <netdb.h>
#include <poll.h>
#include <rdma/rsocket.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace riomesh::interop {
namespace {

class rsocket_api final : public peer_api {
 public:
  ~rsocket_api() override { close(); }
  const char* name() const override { return "rsocket"; }

  bool accept(const std::string& addr, const std::string& port, int slots,
              const std::string& ready_file) override {
    addrinfo* ai = resolve(addr, port, true);
    if (!ai)
      return false;
    int l = rsocket(ai->ai_family, SOCK_STREAM, 0);
    int one = 1;
    bool ok = l >= 0 && rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
              set_slots(l, slots) && rbind(l, ai->ai_addr, ai->ai_addrlen) == 0 &&
              rlisten(l, 1) == 0;
    freeaddrinfo(ai);
    if (!ok)
      return fail("listen");
    if (!ready_file.empty())
      std::fclose(std::fopen(ready_file.c_str(), "w"));
    fd_ = raccept(l, nullptr, nullptr);
    rclose(l);
    return fd_ >= 0 || fail("raccept");
  }

  bool connect(const std::string& addr, const std::string& port, int slots) override {
    addrinfo* ai = resolve(addr, port, false);
    if (!ai)
      return false;
    fd_ = rsocket(ai->ai_family, SOCK_STREAM, 0);
    bool ok = fd_ >= 0 && set_slots(fd_, slots) && rconnect(fd_, ai->ai_addr, ai->ai_addrlen) == 0;
    freeaddrinfo(ai);
    return ok || fail("rconnect");
  }

  bool send_all(const void* data, std::size_t n) override {
    auto* p = static_cast<const char*>(data);
    for (std::size_t done = 0; done < n;) {
      long r = send_some(p + done, n - done);
      if (r < 0)
        return false;
      done += static_cast<std::size_t>(r);
    }
    return true;
  }
  long recv_some(void* out, std::size_t n) override {
    ssize_t r = rrecv(fd_, out, n, 0);
    if (r < 0)
      fail("rrecv");
    if (r == 0 && n > 0)
      peer_ended_ = true;
    return r;
  }
  long send_some(const void* data, std::size_t n) override {
    ssize_t r = rsend(fd_, data, n, 0);
    if (r < 0)
      fail("rsend");
    return r;
  }

  bool riomap(void* base, std::size_t n, std::uint64_t offset) override {
    off_t got = ::riomap(fd_, base, n, PROT_WRITE, 0, static_cast<off_t>(offset));
    if (got != static_cast<off_t>(offset))
      return fail("riomap");
    maps_.emplace_back(base, n);
    return true;
  }
  bool riounmap(void* base, std::size_t n, std::uint64_t) override {
    if (::riounmap(fd_, base, n) != 0)
      return fail("riounmap");
    maps_.erase(std::find(maps_.begin(), maps_.end(), std::make_pair(base, n)));
    return true;
  }
  write_result riowrite(const void* data, std::size_t n, std::uint64_t offset) override {
    auto* p = static_cast<const char*>(data);
    for (std::size_t done = 0; done < n;) {
      errno = 0;
      std::size_t r = ::riowrite(fd_, p + done, n - done, static_cast<off_t>(offset + done), 0);
      if (r == static_cast<std::size_t>(-1)) {
        fail("riowrite");
        return write_result::failed;
      }
      if (r == 0) {  // no iomap entry covers the offset; errno untouched
        error_ = "riowrite: no mapping at offset " + std::to_string(offset + done);
        return write_result::no_mapping;
      }
      done += r;
    }
    return write_result::ok;
  }

  int poll_in(int timeout_ms) override {
    pollfd p{fd_, POLLIN, 0};
    int n = rpoll(&p, 1, timeout_ms);
    if (n < 0)
      return fail("rpoll"), -1;
    return n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
  }
  bool shutdown_write() override {
    // librdmacm v44: once the peer has ended its stream, rshutdown(SHUT_WR)
    // disconnects at once and skips its wait for our sends to complete, so
    // a process that leaves right after can take its last writes with its
    // queue pair (seen once in the VM: the peer got none of 71680 bytes).
    // Nothing in the rsocket API tells when they are done: give them time.
    if (rshutdown(fd_, SHUT_WR) != 0)
      return fail("rshutdown");
    drain_before_close_ = peer_ended_;
    return true;
  }
  void close() override {
    if (drain_before_close_)
      std::this_thread::sleep_for(std::chrono::seconds(1));
    // librdmacm v44's rclose unregisters leftover maps after it has dropped
    // the socket's descriptor, so its riounmap fails with EBADF forever and
    // rclose never returns: unmap everything first, as riostream does.
    for (auto& [base, n] : maps_)
      ::riounmap(fd_, base, n);
    maps_.clear();
    if (fd_ >= 0)
      rclose(fd_);
    fd_ = -1;
  }
  std::string error() const override { return error_; }

 private:
  addrinfo* resolve(const std::string& addr, const std::string& port, bool passive) {
    addrinfo hints{}, *ai = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int rc = getaddrinfo(addr.c_str(), port.c_str(), &hints, &ai);
    if (rc != 0)
      error_ = "getaddrinfo " + addr + ": " + gai_strerror(rc);
    return rc == 0 ? ai : nullptr;
  }
  bool set_slots(int s, int slots) {
    return slots == 0 || rsetsockopt(s, SOL_RDMA, RDMA_IOMAPSIZE, &slots, sizeof slots) == 0;
  }
  bool fail(const char* what) {
    error_ = std::string{what} + ": " + std::strerror(errno);
    return false;
  }

  int fd_ = -1;
  std::string error_;
  bool peer_ended_ = false, drain_before_close_ = false;
  std::vector<std::pair<void*, std::size_t>> maps_;
};

}  // namespace

std::unique_ptr<peer_api> make_peer_api() {
  return std::make_unique<rsocket_api>();
}

}  // namespace riomesh::interop
