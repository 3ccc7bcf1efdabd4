// The rdma channel: the rsocket engine on real verbs. This shell owns the
// rdma_cm id, the queue pair, its completion queue and the memory
// registrations, posts the engine's work and feeds it completions; the
// protocol is entirely the engine's.
#pragma once

#include <riomesh/channels/channel.hpp>
#include <riomesh/channels/engine/engine.hpp>
#include <riomesh/config/settings.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

struct rdma_cm_id;
struct rdma_event_channel;
struct ibv_pd;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_mr;

namespace riomesh::channels::verbs {

struct rdma_params {
  engine::params engine;  // queue sizes, inline, iomap slots
  std::size_t recv_ring = 128 * 1024;
  std::size_t send_ring = 128 * 1024;
  int timeout_ms = 5000;  // address, route and connection setup
  std::chrono::nanoseconds keepalive = std::chrono::seconds(1);  // 0: never
  std::string device;  // empty: whichever device routes to the address

  static rdma_params from(const config::channel_settings& c);
};

class rdma_listener;

class rdma_channel final : public channel {
 public:
  ~rdma_channel() override;
  rdma_channel(const rdma_channel&) = delete;
  rdma_channel& operator=(const rdma_channel&) = delete;

  // Resolves, connects and waits for the connection; empty with `error` set.
  static std::unique_ptr<rdma_channel> connect(const config::endpoint& to, const rdma_params& p,
                                               std::string& error);

  io_result send(const void* data, std::size_t length) override;
  io_result recv(void* out, std::size_t length) override;
  std::pair<const unsigned char*, std::size_t> peek() override { return eng_->peek(); }
  void consume(std::size_t n) override;
  map_result map(void* base, std::size_t length, std::optional<std::uint64_t> offset) override;
  status unmap(std::uint64_t offset) override;
  io_result iowrite(const void* source, std::size_t length, std::uint64_t offset,
                    std::uint64_t token) override;
  status shutdown(shutdown_how how) override;
  // Corked, sends and iowrites leave their work requests for one chained
  // post when uncorked.
  void cork(bool on) override;
  bool drained() const override { return eng_->drained(); }
  bool awaits_peer_on_close() const override { return true; }
  bool register_memory(const void* base, std::size_t length) override;
  void deregister_memory(const void* base) override;
  bool registers_memory() const override { return true; }
  void keepalive();
  // A keepalive every params.keepalive: a peer that is gone then fails it
  // (the transport's retries run out) and the connection closes.
  void tick(std::chrono::steady_clock::time_point now) override;

  int wait_fd() const override { return epoll_fd_; }
  bool wants_write() const override { return false; }
  void progress() override;
  bool busy_poll() override;
  bool arm() override;
  bool polls_without_syscalls() const override { return true; }
  bool take_events(std::vector<event>& out) override;

  bool closed() const override { return eng_->closed(); }
  bool failed() const override { return eng_->failed(); }
  const std::string& reason() const override { return eng_->reason(); }
  const std::string& peer() const override { return peer_; }
  const engine::engine& protocol() const { return *eng_; }
  // What setup had to adjust (queue or inline sizes the device could not
  // give), for the owner to log.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  friend class rdma_listener;
  // The engine property suite drives the engine of a real connection
  // directly (tests/property/verbs_link.cpp).
  friend struct rdma_channel_probe;
  rdma_channel() = default;
  // Creates PD, CQ, QP and the engine's regions on `id`; false with `error`.
  bool setup(rdma_cm_id* id, rdma_event_channel* events, const rdma_params& p, std::string& error);
  void post_work();
  // Takes in every queued completion; true if there was any.
  bool poll_completions();
  void handle_cm_events();
  // The registration covering [p, p + n) among register_memory()'s, or null.
  ibv_mr* registered(const void* p, std::size_t n) const;

  rdma_params params_;
  std::string peer_;
  rdma_event_channel* cm_events_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;
  ibv_cq* cq_ = nullptr;
  int epoll_fd_ = -1;
  std::vector<unsigned char> target_list_, recv_ring_, send_ring_;
  ibv_mr* mrs_[3] = {nullptr, nullptr, nullptr};
  std::map<std::uint64_t, ibv_mr*> maps_;  // offset -> our map's registration
  // iowrite sources outside registered memory, registered per call and
  // released at its iowrite_done (calls complete in order: a FIFO per
  // token; null where registered memory served)
  std::map<std::uint64_t, std::deque<ibv_mr*>> sources_;
  std::map<std::uintptr_t, ibv_mr*> registered_;  // register_memory(), by start address
  std::unique_ptr<engine::engine> eng_;
  std::vector<engine::work> work_;
  bool disconnected_ = false;
  // Accepted, the peer's ESTABLISHED not yet seen: since when.
  std::optional<std::chrono::steady_clock::time_point> establishing_since_;
  // The completion queue will signal the completion channel on its next
  // entry; cleared when we take that signal, so we re-arm once per wake-up
  // rather than on every progress() call.
  bool armed_ = false;
  bool corked_ = false;
  std::chrono::steady_clock::time_point last_keepalive_{};
  std::vector<std::string> notes_;
};

// Listens with rdma_cm. accept() takes one connection request and accepts
// it without waiting for the peer's last step: a channel that is not
// established within params.timeout_ms then fails.
class rdma_listener {
 public:
  ~rdma_listener();
  static std::unique_ptr<rdma_listener> listen(const config::endpoint& at, const rdma_params& p,
                                               std::string& error);
  int port() const;
  int fd() const;
  // Waits up to `timeout` for a connection; empty with `error` set on failure.
  std::unique_ptr<rdma_channel> accept(std::chrono::milliseconds timeout, std::string& error);
  // Rejects the next waiting request, if any; `peer` names it.
  bool refuse(std::string& peer);

 private:
  rdma_params params_;
  rdma_event_channel* events_ = nullptr;
  rdma_cm_id* id_ = nullptr;
};

}  // namespace riomesh::channels::verbs
