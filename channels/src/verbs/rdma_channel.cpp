#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <riomesh/channels/wire/iomap_size.hpp>
#include <riomesh/config/address.hpp>

#include "../net/resolve.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace riomesh::channels::verbs {
namespace {

std::string sys_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void set_nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

engine::completion_status status_of(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS:
      return engine::completion_status::success;
    case IBV_WC_WR_FLUSH_ERR:
      return engine::completion_status::flushed;
    case IBV_WC_REM_ACCESS_ERR:
      return engine::completion_status::remote_access;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return engine::completion_status::rnr_retry_exceeded;
    case IBV_WC_RETRY_EXC_ERR:
      return engine::completion_status::retry_exceeded;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_LOC_PROT_ERR:
      return engine::completion_status::local_error;
    default:
      return engine::completion_status::other;
  }
}

// Waits for the next connection manager event on `ch`; null on timeout.
rdma_cm_event* next_event(rdma_event_channel* ch, int timeout_ms) {
  pollfd p{ch->fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) != 1)
    return nullptr;
  rdma_cm_event* ev = nullptr;
  return rdma_get_cm_event(ch, &ev) == 0 ? ev : nullptr;
}

// Waits for `expected`; anything else is an error named in `error`.
bool expect_event(rdma_event_channel* ch, rdma_cm_event_type expected, int timeout_ms,
                  std::string& error, std::vector<unsigned char>* private_data = nullptr) {
  rdma_cm_event* ev = next_event(ch, timeout_ms);
  if (!ev) {
    error = std::string{"timed out waiting for "} + rdma_event_str(expected);
    return false;
  }
  bool ok = ev->event == expected && ev->status == 0;
  if (!ok)
    error = std::string{rdma_event_str(ev->event)} + " (status " + std::to_string(ev->status) +
            ") instead of " + rdma_event_str(expected);
  if (ok && private_data && ev->param.conn.private_data)
    private_data->assign(static_cast<const unsigned char*>(ev->param.conn.private_data),
                         static_cast<const unsigned char*>(ev->param.conn.private_data) +
                             ev->param.conn.private_data_len);
  rdma_ack_cm_event(ev);
  return ok;
}

rdma_conn_param conn_param(const std::array<unsigned char, wire::conn_data_size>& data) {
  rdma_conn_param p{};
  p.private_data = data.data();
  p.private_data_len = static_cast<std::uint8_t>(data.size());
  // As rsockets: no RDMA READ either way, infinite receiver-not-ready retry.
  p.responder_resources = 0;
  p.initiator_depth = 0;
  p.flow_control = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  return p;
}

}  // namespace

rdma_params rdma_params::from(const config::channel_settings& c) {
  rdma_params p;
  p.engine.sq_size = c.sq_size;
  p.engine.rq_size = c.rq_size;
  p.engine.inline_size = c.inline_size;
  p.engine.iomap_slots = c.iomap_size;
  p.recv_ring = c.recv_buffer;
  p.send_ring = c.send_buffer;
  return p;
}

rdma_channel::~rdma_channel() {
  if (id_ && !disconnected_)
    rdma_disconnect(id_);
  for (auto& [off, mr] : maps_)
    ibv_dereg_mr(mr);
  for (auto& [token, mrs] : sources_)
    for (auto* mr : mrs)
      ibv_dereg_mr(mr);
  if (id_ && id_->qp)
    rdma_destroy_qp(id_);
  for (auto* mr : mrs_)
    if (mr)
      ibv_dereg_mr(mr);
  if (cq_)
    ibv_destroy_cq(cq_);
  if (comp_)
    ibv_destroy_comp_channel(comp_);
  if (pd_)
    ibv_dealloc_pd(pd_);
  if (id_)
    rdma_destroy_id(id_);
  if (cm_events_)
    rdma_destroy_event_channel(cm_events_);
  if (epoll_fd_ >= 0)
    ::close(epoll_fd_);
}

bool rdma_channel::setup(rdma_cm_id* id, rdma_event_channel* events, const rdma_params& p,
                         std::string& error) {
  params_ = p;
  id_ = id;
  cm_events_ = events;
  auto& ep = params_.engine;
  pd_ = ibv_alloc_pd(id->verbs);
  comp_ = pd_ ? ibv_create_comp_channel(id->verbs) : nullptr;
  if (!comp_) {
    error = sys_error("cannot allocate a protection domain or completion channel");
    return false;
  }
  if (id->verbs->device->transport_type == IBV_TRANSPORT_IWARP) {
    error = std::string{"device "} + ibv_get_device_name(id->verbs->device) +
            " is iWARP (e.g. siw): it has no RDMA write with immediate data, which this "
            "channel needs; use an InfiniBand or RoCE device, or the tcp fabric";
    return false;
  }
  // Registration pins memory: check the limit before the kernel refuses.
  std::size_t need = wire::target_list_size(ep.iomap_slots) + params_.recv_ring + params_.send_ring;
  rlimit lock{};
  if (getrlimit(RLIMIT_MEMLOCK, &lock) == 0 && lock.rlim_cur != RLIM_INFINITY &&
      need > lock.rlim_cur) {
    error = "the locked-memory limit (ulimit -l, RLIMIT_MEMLOCK) is " +
            std::to_string(lock.rlim_cur / 1024) + " KiB, but one connection registers " +
            std::to_string((need + 1023) / 1024) +
            " KiB; raise it (ulimit -l unlimited, or memlock in /etc/security/limits.conf)";
    return false;
  }
  ibv_device_attr dev{};
  ibv_query_device(id->verbs, &dev);
  // The device may allow fewer work requests than asked for: use what it has.
  auto limit = static_cast<std::uint32_t>(dev.max_qp_wr);
  if (ep.sq_size > limit || ep.rq_size + wire::control_slots > limit)
    notes_.push_back("queue sizes clamped to the device's " + std::to_string(limit) +
                     " work requests (asked: sq " + std::to_string(ep.sq_size) + ", rq " +
                     std::to_string(ep.rq_size) + ")");
  ep.sq_size = std::min(ep.sq_size, limit);
  ep.rq_size = std::min(ep.rq_size, limit - wire::control_slots);
  // One completion queue serves both: it must hold every request at once.
  auto cqe_limit = static_cast<std::uint32_t>(dev.max_cqe);
  if (ep.sq_size + ep.rq_size + 2 * wire::control_slots > cqe_limit) {
    ep.sq_size = cqe_limit - ep.rq_size - 2 * wire::control_slots;
    notes_.push_back("send queue clamped to " + std::to_string(ep.sq_size) +
                     " so that one completion queue of " + std::to_string(cqe_limit) +
                     " entries holds both queues");
  }
  cq_ =
      ibv_create_cq(id->verbs, static_cast<int>(ep.sq_size + ep.rq_size + 2 * wire::control_slots),
                    nullptr, comp_, 0);
  if (!cq_) {
    error = sys_error("cannot create a completion queue");
    return false;
  }
  ibv_qp_init_attr qa{};
  qa.send_cq = qa.recv_cq = cq_;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 1;
  qa.cap.max_send_wr = ep.sq_size;
  qa.cap.max_recv_wr = ep.rq_size + wire::control_slots;
  qa.cap.max_send_sge = 2;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = ep.inline_size;
  if (rdma_create_qp(id, pd_, &qa) != 0) {
    error =
        sys_error("cannot create the queue pair (sq " + std::to_string(ep.sq_size) + ", rq " +
                  std::to_string(ep.rq_size) + ", inline " + std::to_string(ep.inline_size) + ")");
    return false;
  }
  if (qa.cap.max_inline_data < ep.inline_size)
    notes_.push_back("inline size clamped to the device's " +
                     std::to_string(qa.cap.max_inline_data) +
                     " bytes (asked: " + std::to_string(ep.inline_size) + ")");
  ep.inline_size = qa.cap.max_inline_data;
  target_list_.assign(wire::target_list_size(ep.iomap_slots), 0);
  recv_ring_.assign(params_.recv_ring, 0);
  send_ring_.assign(params_.send_ring, 0);
  const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  mrs_[0] = ibv_reg_mr(pd_, target_list_.data(), target_list_.size(), remote);
  mrs_[1] = ibv_reg_mr(pd_, recv_ring_.data(), recv_ring_.size(), remote);
  mrs_[2] = ibv_reg_mr(pd_, send_ring_.data(), send_ring_.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mrs_[0] || !mrs_[1] || !mrs_[2]) {
    error = sys_error("cannot register " +
                      std::to_string(target_list_.size() + recv_ring_.size() + send_ring_.size()) +
                      " bytes of connection memory (is the memlock limit, ulimit -l, too low?)");
    return false;
  }
  engine::regions mem{{target_list_.data(), target_list_.size(), mrs_[0]->lkey, mrs_[0]->rkey},
                      {recv_ring_.data(), recv_ring_.size(), mrs_[1]->lkey, mrs_[1]->rkey},
                      {send_ring_.data(), send_ring_.size(), mrs_[2]->lkey, mrs_[2]->rkey}};
  eng_ = std::make_unique<engine::engine>(ep, mem);
  ibv_req_notify_cq(cq_, 0);
  post_work();  // every receive, before the connection exists
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  set_nonblocking(comp_->fd);
  for (int fd : {comp_->fd, cm_events_->fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  return !eng_->failed();
}

std::unique_ptr<rdma_channel> rdma_channel::connect(const config::endpoint& to,
                                                    const rdma_params& p, std::string& error) {
  std::unique_ptr<rdma_channel> ch(new rdma_channel);
  auto* events = rdma_create_event_channel();
  rdma_cm_id* id = nullptr;
  if (!events || rdma_create_id(events, &id, nullptr, RDMA_PS_TCP) != 0) {
    error = sys_error("rdma_cm is not available (no RDMA device, or rdma_ucm not loaded)");
    if (events)
      rdma_destroy_event_channel(events);
    return nullptr;
  }
  ch->cm_events_ = events;
  ch->id_ = id;
  auto list = net::resolve(to, false, error);
  if (!list)
    return nullptr;
  int rc = rdma_resolve_addr(id, nullptr, list->ai_addr, p.timeout_ms);
  std::string step;
  if (rc != 0 || !expect_event(events, RDMA_CM_EVENT_ADDR_RESOLVED, p.timeout_ms, step)) {
    error = "rdma_cm cannot resolve " + config::to_string(to) + ": " +
            (rc ? std::string{std::strerror(errno)} : step);
    return nullptr;
  }
  rc = rdma_resolve_route(id, p.timeout_ms);
  if (rc != 0 || !expect_event(events, RDMA_CM_EVENT_ROUTE_RESOLVED, p.timeout_ms, step)) {
    error = "rdma_cm cannot find a route to " + config::to_string(to) + ": " +
            (rc ? std::string{std::strerror(errno)} : step);
    return nullptr;
  }
  if (!ch->setup(id, events, p, error))
    return nullptr;
  auto mine = wire::encode(ch->eng_->local_conn_data());
  auto param = conn_param(mine);
  std::vector<unsigned char> theirs;
  if (rdma_connect(id, &param) != 0 ||
      !expect_event(events, RDMA_CM_EVENT_ESTABLISHED, p.timeout_ms, step, &theirs)) {
    error = "cannot connect to " + config::to_string(to) + ": " + step;
    return nullptr;
  }
  auto peer = wire::decode_conn_data(theirs.data(), theirs.size());
  if (auto* bad = std::get_if<std::string>(&peer)) {
    error = "peer " + config::to_string(to) + ": " + *bad;
    return nullptr;
  }
  ch->peer_ = net::name_of(rdma_get_peer_addr(id));
  set_nonblocking(events->fd);
  if (!ch->eng_->start(std::get<wire::conn_data>(peer))) {
    error = "peer " + ch->peer_ + ": " + ch->eng_->reason();
    return nullptr;
  }
  ch->post_work();
  return ch;
}

void rdma_channel::post_work() {
  work_.clear();
  eng_->take_work(work_);
  for (const auto& w : work_) {
    int rc = 0;
    if (w.kind == engine::work_kind::post_recv) {
      // Zero-SGE receives: only WRITE WITH IMMEDIATE may consume them.
      for (std::uint32_t left = w.recv_count; left > 0 && rc == 0;) {
        ibv_recv_wr wrs[32] = {};
        std::uint32_t n = std::min<std::uint32_t>(left, 32);
        for (std::uint32_t i = 0; i < n; ++i)
          wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
        ibv_recv_wr* bad = nullptr;
        rc = ibv_post_recv(id_->qp, wrs, &bad);
        left -= n;
      }
    } else {
      ibv_sge sge[2];
      for (std::uint8_t i = 0; i < w.num_sge; ++i)
        sge[i] = {w.sge[i].addr, w.sge[i].length, w.sge[i].lkey};
      ibv_send_wr wr{};
      wr.wr_id = w.wr_id;
      wr.sg_list = sge;
      wr.num_sge = w.num_sge;
      wr.opcode = w.kind == engine::work_kind::write_with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM
                                                              : IBV_WR_RDMA_WRITE;
      wr.send_flags = IBV_SEND_SIGNALED | (w.inline_data ? IBV_SEND_INLINE : 0);
      wr.imm_data = wire::to_wire(w.imm);
      wr.wr.rdma.remote_addr = w.remote_addr;
      wr.wr.rdma.rkey = w.rkey;
      ibv_send_wr* bad = nullptr;
      rc = ibv_post_send(id_->qp, &wr, &bad);
    }
    if (rc != 0) {
      errno = rc;
      eng_->fail(sys_error("peer " + peer_ + ": cannot post " +
                           (w.kind == engine::work_kind::post_recv
                                ? std::to_string(w.recv_count) + " receives"
                                : "a " + std::to_string(w.length()) + "-byte " +
                                      (w.kind == engine::work_kind::write ? "WRITE" : "WRITE_IMM") +
                                      (w.inline_data ? " (inline)" : ""))));
      return;
    }
  }
}

void rdma_channel::poll_completions() {
  ibv_wc wc[32];
  for (;;) {
    int n = ibv_poll_cq(cq_, 32, wc);
    if (n <= 0)
      return;
    for (int i = 0; i < n; ++i) {
      auto st = status_of(wc[i].status);
      std::string detail = st == engine::completion_status::success
                               ? std::string{}
                               : ibv_wc_status_str(wc[i].status);
      if (wc[i].wr_id == 0)  // receives carry id 0, sends never do
        eng_->on_recv_completion({wire::from_wire(wc[i].imm_data), wc[i].byte_len, st, detail});
      else
        eng_->on_send_completion({wc[i].wr_id, st, detail});
    }
    post_work();
  }
}

void rdma_channel::handle_cm_events() {
  rdma_cm_event* ev = nullptr;
  while (rdma_get_cm_event(cm_events_, &ev) == 0) {
    if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
      // The peer's last writes were acknowledged before its disconnect left:
      // their completions are already queued. Take them in first, so a peer
      // that sent everything and closed is not taken for one that vanished.
      poll_completions();
      disconnected_ = true;
      eng_->on_disconnected("RDMA_CM_EVENT_DISCONNECTED");
    }
    rdma_ack_cm_event(ev);
  }
}

void rdma_channel::progress() {
  // Drain the completion channel, re-arm, then poll again: a completion that
  // lands between the last poll and the arming still wakes us.
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(comp_, &cq, &context) == 0)
    ibv_ack_cq_events(cq, 1);
  poll_completions();
  ibv_req_notify_cq(cq_, 0);
  poll_completions();
  handle_cm_events();  // after the completions that came before them
  post_work();
  if (eng_->closed() && !disconnected_) {
    rdma_disconnect(id_);  // the peer's connection manager learns of it
    disconnected_ = true;
  }
}

io_result rdma_channel::send(const void* data, std::size_t length) {
  auto r = eng_->send(data, length);
  post_work();
  return r;
}

io_result rdma_channel::recv(void* out, std::size_t length) {
  auto r = eng_->recv(out, length);
  post_work();
  return r;
}

void rdma_channel::consume(std::size_t n) {
  eng_->consume(n);
  post_work();
}

map_result rdma_channel::map(void* base, std::size_t length, std::optional<std::uint64_t> offset) {
  ibv_mr* mr = ibv_reg_mr(pd_, base, length, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!mr)
    return {status::invalid};
  auto r =
      eng_->riomap({static_cast<unsigned char*>(base), length, mr->lkey, mr->rkey}, true, offset);
  post_work();
  if (r.st != status::ok) {
    ibv_dereg_mr(mr);
    return {r.st};
  }
  maps_[r.offset] = mr;
  return {status::ok, r.offset};
}

status rdma_channel::unmap(std::uint64_t offset) {
  auto it = maps_.find(offset);
  if (it == maps_.end())
    return status::invalid;
  auto st = eng_->riounmap(reinterpret_cast<std::uint64_t>(it->second->addr), it->second->length);
  post_work();
  ibv_dereg_mr(it->second);
  maps_.erase(it);
  return st;
}

io_result rdma_channel::iowrite(const void* source, std::size_t length, std::uint64_t offset,
                                std::uint64_t token) {
  if (length == 0)
    return {0, status::ok};
  // Registered for this call only: a cached registration could outlive the
  // caller's buffer and send whatever pages it pinned. (The iomap manager's
  // cache is where reuse belongs.)
  ibv_mr* mr = ibv_reg_mr(pd_, const_cast<void*>(source), length, IBV_ACCESS_LOCAL_WRITE);
  if (!mr)
    return {0, status::invalid};
  auto r = eng_->riowrite(
      {reinterpret_cast<std::uint64_t>(source), static_cast<std::uint32_t>(length), mr->lkey},
      offset, token);
  if (r.bytes > 0)
    sources_[token].push_back(mr);
  else
    ibv_dereg_mr(mr);
  post_work();
  return r;
}

bool rdma_channel::take_events(std::vector<event>& out) {
  std::size_t first = out.size();
  bool any = eng_->take_events(out);
  for (std::size_t i = first; i < out.size(); ++i) {
    if (out[i].kind != event_kind::iowrite_done)
      continue;
    auto it = sources_.find(out[i].token);
    if (it == sources_.end() || it->second.empty())
      continue;
    ibv_dereg_mr(it->second.front());
    it->second.pop_front();
    if (it->second.empty())
      sources_.erase(it);
  }
  return any;
}

status rdma_channel::shutdown(shutdown_how how) {
  auto st = eng_->shutdown(how);
  post_work();
  return st;
}

void rdma_channel::keepalive() {
  eng_->keepalive();
  post_work();
}

rdma_listener::~rdma_listener() {
  if (id_)
    rdma_destroy_id(id_);
  if (events_)
    rdma_destroy_event_channel(events_);
}

std::unique_ptr<rdma_listener> rdma_listener::listen(const config::endpoint& at,
                                                     const rdma_params& p, std::string& error) {
  std::unique_ptr<rdma_listener> l(new rdma_listener);
  l->params_ = p;
  l->events_ = rdma_create_event_channel();
  if (!l->events_ || rdma_create_id(l->events_, &l->id_, nullptr, RDMA_PS_TCP) != 0) {
    error = sys_error("rdma_cm is not available (no RDMA device, or rdma_ucm not loaded)");
    return nullptr;
  }
  auto list = net::resolve(at, true, error);
  if (!list)
    return nullptr;
  int rc = rdma_bind_addr(l->id_, list->ai_addr);
  if (rc != 0 || rdma_listen(l->id_, 16) != 0) {
    error = sys_error("rdma_cm cannot listen on " + config::to_string(at));
    return nullptr;
  }
  return l;
}

int rdma_listener::port() const {
  return ntohs(rdma_get_src_port(id_));
}
int rdma_listener::fd() const {
  return events_->fd;
}

std::unique_ptr<rdma_channel> rdma_listener::accept(std::chrono::milliseconds timeout,
                                                    std::string& error) {
  rdma_cm_event* ev = next_event(events_, static_cast<int>(timeout.count()));
  if (!ev) {
    error = "no connection request within " + std::to_string(timeout.count()) + " ms";
    return nullptr;
  }
  if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
    error = std::string{"unexpected "} + rdma_event_str(ev->event);
    rdma_ack_cm_event(ev);
    return nullptr;
  }
  rdma_cm_id* child = ev->id;
  std::vector<unsigned char> theirs(static_cast<const unsigned char*>(ev->param.conn.private_data),
                                    static_cast<const unsigned char*>(ev->param.conn.private_data) +
                                        ev->param.conn.private_data_len);
  rdma_ack_cm_event(ev);
  std::unique_ptr<rdma_channel> ch(new rdma_channel);
  // Each connection gets its own event channel: its DISCONNECTED must reach
  // it, not the listener.
  auto* own = rdma_create_event_channel();
  if (!own || rdma_migrate_id(child, own) != 0) {
    error = sys_error("cannot give the connection its own event channel");
    rdma_reject(child, nullptr, 0);
    rdma_destroy_id(child);
    if (own)
      rdma_destroy_event_channel(own);
    return nullptr;
  }
  ch->peer_ = net::name_of(rdma_get_peer_addr(child));
  auto peer = wire::decode_conn_data(theirs.data(), theirs.size());
  if (auto* bad = std::get_if<std::string>(&peer)) {
    error = "peer " + ch->peer_ + ": " + *bad;
    rdma_reject(child, nullptr, 0);
    ch->id_ = child;
    ch->cm_events_ = own;
    return nullptr;
  }
  if (!ch->setup(child, own, params_, error)) {
    rdma_reject(child, nullptr, 0);
    return nullptr;
  }
  if (!ch->eng_->start(std::get<wire::conn_data>(peer))) {
    error = "peer " + ch->peer_ + ": " + ch->eng_->reason();
    rdma_reject(child, nullptr, 0);
    return nullptr;
  }
  auto mine = wire::encode(ch->eng_->local_conn_data());
  auto param = conn_param(mine);
  std::string step;
  if (rdma_accept(child, &param) != 0 ||
      !expect_event(own, RDMA_CM_EVENT_ESTABLISHED, params_.timeout_ms, step)) {
    error = "peer " + ch->peer_ + ": accept failed: " + step;
    return nullptr;
  }
  set_nonblocking(own->fd);
  ch->post_work();
  return ch;
}

}  // namespace riomesh::channels::verbs
