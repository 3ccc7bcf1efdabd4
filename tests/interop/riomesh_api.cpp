// peer_api on a riomesh raw_socket over verbs, speaking plain rsockets.
#include "peer_api.hpp"

#include <riomesh/channels/raw_socket.hpp>

#include <cstdio>

namespace riomesh::interop {
namespace {

using namespace riomesh::channels;
using namespace std::chrono_literals;
constexpr unsigned poll_in_bits = channels::poll_in;

class riomesh_api final : public peer_api {
 public:
  const char* name() const override { return "riomesh"; }

  bool accept(const std::string& addr, const std::string& port, int slots,
              const std::string& ready_file) override {
    auto opt = options(slots);
    auto l = listen(endpoint(addr, port), opt, error_);
    if (!l)
      return false;
    if (!ready_file.empty())
      std::fclose(std::fopen(ready_file.c_str(), "w"));
    s_ = raw_socket::accept(*l, 30s, opt, error_);
    return ready();
  }
  bool connect(const std::string& addr, const std::string& port, int slots) override {
    s_ = raw_socket::connect(endpoint(addr, port), options(slots), error_);
    return ready();
  }

  bool send_all(const void* data, std::size_t n) override {
    auto r = s_->send(data, n);
    return r.bytes == n || failed("send", r.st);
  }
  long recv_some(void* out, std::size_t n) override {
    auto r = s_->recv(out, n);
    if (r.bytes > 0)
      return static_cast<long>(r.bytes);
    return r.st == status::eof ? 0 : (failed("recv", r.st), -1);
  }
  long send_some(const void* data, std::size_t n) override {
    auto r = s_->send(data, n);
    if (r.bytes > 0)
      return static_cast<long>(r.bytes);
    return failed("send", r.st), -1;
  }

  bool riomap(void* base, std::size_t n, std::uint64_t offset) override {
    auto r = s_->riomap(base, n, offset);
    return r.st == status::ok || failed("riomap", r.st);
  }
  bool riounmap(void*, std::size_t, std::uint64_t offset) override {
    auto st = s_->riounmap(offset);
    return st == status::ok || failed("riounmap", st);
  }
  write_result riowrite(const void* data, std::size_t n, std::uint64_t offset) override {
    auto r = s_->riowrite(data, n, offset);
    if (r.bytes == n)
      return write_result::ok;
    failed("riowrite", r.st);
    return r.st == status::no_mapping ? write_result::no_mapping : write_result::failed;
  }

  int poll_in(int timeout_ms) override {
    return s_->poll(poll_in_bits, std::chrono::milliseconds(timeout_ms)) & poll_in_bits ? 1 : 0;
  }
  bool shutdown_write() override {
    auto st = s_->shutdown(shutdown_how::write);
    return st == status::ok || failed("shutdown", st);
  }
  void close() override {
    if (s_)
      s_->close();
    s_.reset();
  }
  std::string error() const override { return error_; }

 private:
  static config::endpoint endpoint(const std::string& addr, const std::string& port) {
    return {addr, static_cast<std::uint16_t>(std::stoi(port))};
  }
  static channel_options options(int slots) {
    channel_options o;
    o.fabric = config::fabric_kind::verbs;
    o.plain_rsocket = true;
    o.settings.iomap_size = static_cast<std::uint32_t>(slots);
    return o;
  }
  bool ready() {
    if (s_)
      s_->set_timeout(60s);
    return s_ != nullptr;
  }
  bool failed(const char* what, status st) {
    error_ = std::string{what} + ": " + to_string(st);
    if (s_ && s_->closed())
      error_ += " (" + s_->reason() + ")";
    return false;
  }

  std::unique_ptr<raw_socket> s_;
  std::string error_;
};

}  // namespace

std::unique_ptr<peer_api> make_peer_api() {
  return std::make_unique<riomesh_api>();
}

}  // namespace riomesh::interop
