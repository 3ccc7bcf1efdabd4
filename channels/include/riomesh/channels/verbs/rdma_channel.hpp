// The rdma channel: the rsocket engine on real verbs. This shell owns the
// rdma_cm id, the queue pair, its completion queue and the memory
// registrations, posts the engine's work and feeds it completions; the
// protocol is entirely the engine's.
#pragma once

#include <riomesh/channels/channel.hpp>
#include <riomesh/channels/engine/engine.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>
#include <riomesh/config/settings.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct rdma_cm_id;
struct rdma_event_channel;
struct ibv_pd;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_mr;
struct ibv_mw;
struct ibv_qp;

namespace riomesh::channels::verbs {

struct rdma_params {
  engine::params engine;  // queue sizes, inline, iomap slots
  std::size_t recv_ring = 128 * 1024;
  std::size_t send_ring = 128 * 1024;
  int timeout_ms = 5000;  // address, route and connection setup
  std::chrono::nanoseconds keepalive = std::chrono::seconds(1);  // 0: never
  // A work request the transport has not completed within this, plus its
  // bytes' time at 8 MiB/s, ends the connection (0: never): the peer is
  // gone, whatever the device says.
  std::chrono::nanoseconds peer_timeout = std::chrono::seconds(5);
  std::string device;  // empty: whichever device routes to the address
  // RDMA READs and atomics to allow in flight each way (responder
  // resources and initiator depth), at most: the connection gets the
  // least of this, both devices' limits and what the peer asks. 0: none,
  // as rsockets (whose peers ask for none and must get none).
  std::uint32_t read_depth = 0;
  // The node's memory domain, shared by its connections; null: the
  // connection has a private one (its own protection domain).
  std::shared_ptr<memory_domain> domain;

  static rdma_params from(const config::channel_settings& c);
  // The queue pair's local ACK timeout, as the exponent the device takes
  // (4.096 us << n): at most 14 (67 ms), and lower only where the device's
  // eight tries at a lost packet (the first and seven retries) would not
  // fit in `peer_timeout` (rdma_setup.cpp says why). rdma_cm's own
  // choice on RoCE was seen at 2.1 s (exponent 19): one lost
  // acknowledgement then stalls a connection for 2 s, two in a row outlive
  // a 5 s peer timeout on a link that merely drops 1%. 0 (rdma_cm's
  // choice) without a peer timeout.
  static std::uint8_t ack_timeout_for(std::chrono::nanoseconds peer_timeout);
};

class rdma_listener;

class rdma_channel final : public channel, public one_sided_access, public memory_registration {
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
  map_result map(void* base, std::size_t length, std::optional<std::uint64_t> offset,
                 std::uint8_t access = map_access::write) override;
  status unmap(std::uint64_t offset) override;
  io_result iowrite(const void* source, std::size_t length, std::uint64_t offset,
                    std::uint64_t token) override;
  io_result iowrite_pieces(const piece* pieces, std::size_t count, std::uint64_t offset,
                           std::uint64_t token) override;
  // One-sided reads and atomics where the connection negotiated read
  // resources both ways; ioread and ioatomic say unsupported otherwise.
  one_sided_access* one_sided() override { return read_depth_ > 0 ? this : nullptr; }
  io_result ioread(const destination* into, std::size_t count, std::uint64_t offset,
                   std::uint64_t token) override;
  io_result ioatomic(atomic_op op, std::uint64_t offset, std::uint64_t a, std::uint64_t b,
                     std::uint64_t token) override;
  status shutdown(shutdown_how how) override;
  // Corked, sends and iowrites leave their work requests for one chained
  // post when uncorked.
  void cork(bool on) override;
  bool drained() const override { return eng_->drained(); }
  bool awaits_peer_on_close() const override { return true; }
  memory_registration* registration() override { return this; }
  std::optional<memory_pin> pin_memory(const void* base, std::size_t length,
                                       std::shared_ptr<const void> keep) override;
  void unpin_memory(std::uint64_t id) override;
  bool maps_dmabuf(std::string& why) const override { return dev_->dmabuf(why); }
  map_result map_dmabuf(void* base, std::size_t length, int fd,
                        std::optional<std::uint64_t> offset) override;
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
  void on_progress_thread() override;
  bool take_events(std::vector<event>& out) override;
  bool has_events() const override { return eng_->has_events(); }

  bool closed() const override { return eng_->closed(); }
  bool failed() const override { return eng_->failed(); }
  // Named after the peer, as every channel's reason is: the engine's own
  // (a completion error, say) does not know it.
  const std::string& reason() const override {
    const auto& r = eng_->reason();
    if (r.empty() || r.rfind("peer " + peer_ + ":", 0) == 0)
      return r;
    reason_ = "peer " + peer_ + ": " + r;
    return reason_;
  }
  const std::string& peer() const override { return peer_; }
  const engine::engine& protocol() const { return *eng_; }
  // What setup had to adjust (queue or inline sizes the device could not
  // give), for the owner to log.
  const std::vector<std::string>& notes() const { return notes_; }
  // Whether what this connection exposes is reached through memory windows
  // bound to its queue pair (a shared protection domain).
  bool uses_windows() const { return windows_; }

 private:
  friend class rdma_listener;
  // The engine property suite drives the engine of a real connection
  // directly (tests/property/verbs_link.cpp).
  friend struct rdma_channel_probe;
  rdma_channel() = default;
  // Send queue entries kept for window binds (the ring's, the target
  // lists', then maps), and the work request ids they carry.
  static constexpr std::uint32_t bind_slots = 8;
  static constexpr std::uint64_t bind_tag = 1ull << 63;
  // Memory exposed to the peer: a registration, and where windows are used
  // the window bound over it to this queue pair; `rkey` is what the peer
  // gets.
  struct exposure {
    ibv_mr* mr = nullptr;
    ibv_mw* mw = nullptr;
    std::uint32_t rkey = 0;
    std::uint8_t access = map_access::write;
  };
  // Takes the protection domain from the node's memory domain (or a
  // private one), creates CQ, QP and the engine's regions on `id`; false
  // with `error`. An accepting side with windows creates its queue pair
  // itself, so that its windows are bound before the peer may write.
  bool setup(rdma_cm_id* id, rdma_event_channel* events, const rdma_params& p, bool accepting,
             std::string& error);
  // dmabuf >= 0: the bytes are that dma-buf's, from its offset 0.
  bool expose(void* base, std::size_t n, exposure& out, std::string& error, int dmabuf = -1,
              std::uint8_t access = map_access::write);
  map_result map_exposed(void* base, std::size_t length, int dmabuf,
                         std::optional<std::uint64_t> offset, std::uint8_t access);
  // Once the queue pair is connected: the read depth it got both ways,
  // its access opened to the peer's reads and atomics if that is not 0,
  // and the engine told.
  void settle_reads();
  // An lkey for [p, p + n) as a destination or source of one call:
  // pinned memory's, or a registration for the call kept in `own`.
  std::optional<std::uint32_t> key_for(const void* p, std::size_t n, std::vector<ibv_mr*>& own);
  void keep_for_call(const io_result& r, std::uint64_t token, std::vector<ibv_mr*>& own);
  // Posts the bind of `x`'s window (the queue pair is ready to send).
  bool bind(exposure& x, std::string& error);
  void conceal(exposure& x);
  // Accepting with our own queue pair: to RTR and RTS, the windows bound
  // and their binds completed; the peer may write once we accept.
  bool ready_own_qp(std::string& error);
  // The queue pair to the error state (our own: rdma_cm does not) and the
  // peer told.
  void disconnect();
  void post_work();
  // Takes in every queued completion; true if there was any. On the
  // node's shared queue, unless `force`, the queue is polled only if no
  // other connection has since this one last looked (shared_cq.hpp).
  bool poll_completions(bool force = true);
  void on_completion(const ibv_wc& wc);
  // What signals our completions in the wait set: our inbox's kick on the
  // shared queue, or our own queue's completion channel.
  int completion_fd() const;
  void handle_cm_events();
  // The lkey of a pinned registration covering [p, p + n), if any.
  std::optional<std::uint32_t> registered(const void* p, std::size_t n) const;

  rdma_params params_;
  std::string peer_;
  mutable std::string reason_;  // reason(): the engine's, named after the peer
  // Outlives every registration below (members go in reverse order).
  std::shared_ptr<memory_domain> domain_;
  memory_domain::device* dev_ = nullptr;
  bool windows_ = false;
  rdma_event_channel* cm_events_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  ibv_qp* qp_ = nullptr;
  bool own_qp_ = false;  // created here, not by rdma_cm
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;  // our own queue's; none on a shared one
  ibv_cq* cq_ = nullptr;
  // The device's shared completion queue, when this connection is on it:
  // our inbox there, our room in it, and its poll count when we last looked.
  bool counted_ = false;  // among the device's connections (device::joined)
  shared_cq* shared_ = nullptr;
  shared_cq::inbox* inbox_ = nullptr;
  std::uint32_t cq_room_ = 0;
  std::uint64_t cq_seen_ = 0;
  std::vector<ibv_wc> mail_;
  int epoll_fd_ = -1;
  std::vector<unsigned char> target_list_, recv_ring_, send_ring_;
  exposure target_x_, ring_x_;
  ibv_mr* send_mr_ = nullptr;
  std::map<std::uint64_t, exposure> maps_;  // offset -> our map
  std::uint32_t binds_in_flight_ = 0;
  // Accepted with windows: our sends wait for the peer's first write, which
  // follows its own binds (an earlier write of ours could find its ring
  // not yet bound and fail the connection).
  bool holding_ = false;
  std::vector<engine::work> held_;
  // iowrite sources and ioread destinations outside registered memory,
  // registered per call and released at its done event (calls complete in
  // order: a FIFO per token; empty where registered memory served)
  std::map<std::uint64_t, std::deque<std::vector<ibv_mr*>>> sources_;
  std::vector<engine::local_sge> scratch_sges_;  // iowrite_pieces' and ioread's list
  // One-sided reads: what this side asked (read_depth capped by the
  // device) and what the connection got both ways (0: none).
  std::uint32_t read_cap_ = 0, read_depth_ = 0;
  // Where atomics put old values: registered words, one per atomic in
  // flight, and which token holds which.
  std::vector<std::uint64_t> atomic_words_;
  ibv_mr* atomic_mr_ = nullptr;
  std::vector<std::uint32_t> free_words_;
  std::map<std::uint64_t, std::uint32_t> atomic_word_of_;
  // The last pin_memory(): a send pins, then writes from what it pinned,
  // so iowrite() finds its key here without a second look in the shared
  // cache (id 0: none).
  std::uint64_t last_pin_ = 0;
  channels::registration last_pinned_;
  std::unique_ptr<engine::engine> eng_;
  std::vector<engine::work> work_;
  bool disconnected_ = false;
  // Accepted, the peer's ESTABLISHED not yet seen: since when.
  std::optional<std::chrono::steady_clock::time_point> establishing_since_;
  // The oldest uncompleted work request, and since when it is the oldest.
  std::optional<std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> oldest_wr_;
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
