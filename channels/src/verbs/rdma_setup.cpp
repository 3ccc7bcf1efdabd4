// Creating and destroying what one rdma connection owns: protection domain,
// completion channel and queue, queue pair, the engine's registered regions.
// Limits the device cannot meet are clamped and noted; limits the user must
// change (iWARP device, memlock) are errors that say how.
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include <riomesh/channels/wire/iomap_size.hpp>

#include "cm_support.hpp"

#include <infiniband/verbs.h>

#include <rdma/rdma_cma.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>

namespace riomesh::channels::verbs {

using detail::set_nonblocking;
using detail::sys_error;

rdma_params rdma_params::from(const config::channel_settings& c) {
  rdma_params p;
  p.engine.sq_size = c.sq_size;
  p.engine.rq_size = c.rq_size;
  p.engine.inline_size = c.inline_size;
  p.engine.iomap_slots = c.iomap_size;
  p.recv_ring = c.recv_buffer;
  p.send_ring = c.send_buffer;
  p.keepalive = c.keepalive;
  p.peer_timeout = c.peer_timeout;
  return p;
}

std::uint8_t rdma_params::ack_timeout_for(std::chrono::nanoseconds peer_timeout) {
  if (peer_timeout.count() <= 0)
    return 0;
  // 4.096 us << n, the device's wait before it resends what was not
  // acknowledged. At most 67 ms (n = 14), whatever the peer timeout: on a
  // lossy link every lost tail costs this wait (the two-host loss cases
  // ran in about half the time at 67 ms as at 537 ms), and at 2.1 s, what
  // a 20 s peer timeout gave before, soft-RoCE lost a session in 5 of 7
  // runs (docs/reliability.md).
  // Shorter where eight tries would not fit in the peer timeout, but not
  // below 16 ms, where a busy soft-RoCE would resend what is on its way.
  constexpr std::uint8_t lowest = 12, longest = 14;
  constexpr std::int64_t unit_ns = 4096, tries = 8;
  std::uint8_t n = lowest;
  while (n < longest && tries * (unit_ns << (n + 1)) <= peer_timeout.count())
    ++n;
  return n;
}

rdma_channel::~rdma_channel() {
  if (id_ && !disconnected_)
    disconnect();
  for (auto& [off, x] : maps_)
    conceal(x);
  for (auto& [token, calls] : sources_)
    for (auto& mrs : calls)
      for (auto* mr : mrs)
        dev_->deregister(mr);
  if (atomic_mr_)
    dev_->deregister(atomic_mr_);
  // A bound window holds its queue pair: destroying the queue pair first
  // would wait for it forever (rxe).
  conceal(target_x_);
  conceal(ring_x_);
  auto destroy_qp = [this] {
    if (own_qp_ && qp_)
      ibv_destroy_qp(qp_);
    else if (id_ && id_->qp)
      rdma_destroy_qp(id_);
  };
  if (inbox_) {
    // Its flushed completions go with it, before its number can be reused.
    shared_->retire(qp_->qp_num, cq_room_, destroy_qp);
  } else {
    destroy_qp();
    if (shared_)
      shared_->unreserve(cq_room_);
  }
  if (shared_)
    dev_->left(shared_);
  if (counted_)
    dev_->parted();
  if (dev_)
    dev_->deregister(send_mr_);
  if (cq_ && !shared_)
    ibv_destroy_cq(cq_);
  if (comp_)
    ibv_destroy_comp_channel(comp_);
  if (id_)
    rdma_destroy_id(id_);
  if (cm_events_)
    rdma_destroy_event_channel(cm_events_);
  if (epoll_fd_ >= 0)
    ::close(epoll_fd_);
}

bool rdma_channel::setup(rdma_cm_id* id, rdma_event_channel* events, const rdma_params& p,
                         bool accepting, std::string& error) {
  params_ = p;
  id_ = id;
  cm_events_ = events;
  auto& ep = params_.engine;
  const char* device = ibv_get_device_name(id->verbs->device);
  domain_ = params_.domain;
  if (domain_) {
    dev_ = domain_->attach(id->verbs, error);
    if (!dev_)
      return false;
    if (!dev_->windows()) {
      notes_.push_back(std::string{"device "} + device +
                       " has no type 2 memory windows: this connection keeps its own protection "
                       "domain and registrations");
      domain_.reset();
    }
  }
  windows_ = domain_ != nullptr;
  if (!domain_) {
    domain_ = std::make_shared<memory_domain>(memory_limits{});
    dev_ = domain_->attach(id->verbs, error);
    if (!dev_)
      return false;
  }
  pd_ = dev_->pd();
  if (!params_.device.empty() && params_.device != device) {
    error = "the address routes to RDMA device " + std::string{device} +
            ", not to the configured device " + params_.device +
            " (use an address of that device's network interface)";
    return false;
  }
  if (id->verbs->device->transport_type == IBV_TRANSPORT_IWARP) {
    error = std::string{"device "} + device +
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
  read_cap_ = std::min({params_.read_depth, static_cast<std::uint32_t>(dev.max_qp_rd_atom),
                        static_cast<std::uint32_t>(dev.max_qp_init_rd_atom)});
  // The device may allow fewer work requests than asked for: use what it has.
  auto limit = static_cast<std::uint32_t>(dev.max_qp_wr);
  if (ep.sq_size > limit || ep.rq_size + wire::control_slots > limit)
    notes_.push_back("queue sizes clamped to the device's " + std::to_string(limit) +
                     " work requests (asked: sq " + std::to_string(ep.sq_size) + ", rq " +
                     std::to_string(ep.rq_size) + ")");
  ep.sq_size = std::min(ep.sq_size, limit);
  ep.rq_size = std::min(ep.rq_size, limit - wire::control_slots);
  // One completion queue serves both: it must hold every request at once.
  // Window binds take send queue entries beside the engine's.
  const std::uint32_t binds = windows_ ? bind_slots : 0;
  ep.sq_size = std::min(ep.sq_size, limit - binds);
  auto cqe_limit = static_cast<std::uint32_t>(dev.max_cqe);
  if (ep.sq_size + binds + ep.rq_size + 2 * wire::control_slots > cqe_limit) {
    ep.sq_size = cqe_limit - binds - ep.rq_size - 2 * wire::control_slots;
    notes_.push_back("send queue clamped to " + std::to_string(ep.sq_size) +
                     " so that one completion queue of " + std::to_string(cqe_limit) +
                     " entries holds both queues");
  }
  const std::uint32_t room = ep.sq_size + binds + ep.rq_size + 2 * wire::control_slots;
  bool share = false;
  if (windows_) {
    counted_ = true;
    share = dev_->joined();
  }
  if (share) {
    // The node's connections on this device share its queues.
    std::string why;
    shared_ = dev_->completions(room, why);
    if (shared_) {
      cq_ = shared_->cq();
      cq_room_ = room;
    } else {
      notes_.push_back("this connection has a completion queue of its own: " + why);
    }
  }
  if (!shared_) {
    comp_ = ibv_create_comp_channel(id->verbs);
    if (!comp_) {
      error = sys_error("cannot create a completion channel");
      return false;
    }
    cq_ = ibv_create_cq(id->verbs, static_cast<int>(room), nullptr, comp_, 0);
    if (!cq_) {
      error = sys_error("cannot create a completion queue");
      return false;
    }
  }
  ibv_qp_init_attr qa{};
  qa.send_cq = qa.recv_cq = cq_;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 1;
  qa.cap.max_send_wr = ep.sq_size + binds;
  qa.cap.max_recv_wr = ep.rq_size + wire::control_slots;
  // Pieces of a gathered write share work requests, as many as the
  // device takes (2 at least: the send ring wraps).
  qa.cap.max_send_sge = static_cast<std::uint32_t>(
      std::clamp<int>(dev.max_sge, 2, static_cast<int>(engine::max_work_sges)));
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = ep.inline_size;
  own_qp_ = windows_ && accepting;
  if (own_qp_) {
    qp_ = ibv_create_qp(pd_, &qa);
    ibv_qp_attr init{};
    int mask = 0;
    init.qp_state = IBV_QPS_INIT;
    if (qp_ && (rdma_init_qp_attr(id, &init, &mask) != 0 || ibv_modify_qp(qp_, &init, mask) != 0)) {
      error = sys_error("cannot take the queue pair to INIT");
      return false;
    }
  } else if (rdma_create_qp(id, pd_, &qa) == 0) {
    qp_ = id->qp;
  }
  if (!qp_) {
    error =
        sys_error("cannot create the queue pair (sq " + std::to_string(ep.sq_size) + ", rq " +
                  std::to_string(ep.rq_size) + ", inline " + std::to_string(ep.inline_size) + ")");
    return false;
  }
  if (shared_ && !(inbox_ = shared_->attach(qp_->qp_num))) {
    error = sys_error("cannot create an eventfd for the shared completion queue");
    return false;
  }
  if (qa.cap.max_inline_data < ep.inline_size)
    notes_.push_back("inline size clamped to the device's " +
                     std::to_string(qa.cap.max_inline_data) +
                     " bytes (asked: " + std::to_string(ep.inline_size) + ")");
  ep.inline_size = qa.cap.max_inline_data;
  ep.max_sge = qa.cap.max_send_sge;
  target_list_.assign(wire::target_list_size(ep.iomap_slots), 0);
  recv_ring_.assign(params_.recv_ring, 0);
  send_ring_.assign(params_.send_ring, 0);
  send_mr_ =
      dev_->register_region(send_ring_.data(), send_ring_.size(), IBV_ACCESS_LOCAL_WRITE, error);
  if (!send_mr_ || !expose(target_list_.data(), target_list_.size(), target_x_, error) ||
      !expose(recv_ring_.data(), recv_ring_.size(), ring_x_, error))
    return false;
  engine::regions mem{
      {target_list_.data(), target_list_.size(), target_x_.mr->lkey, target_x_.rkey},
      {recv_ring_.data(), recv_ring_.size(), ring_x_.mr->lkey, ring_x_.rkey},
      {send_ring_.data(), send_ring_.size(), send_mr_->lkey, send_mr_->rkey}};
  eng_ = std::make_unique<engine::engine>(ep, mem);
  if (shared_) {
    shared_->sleep(*inbox_);
  } else {
    ibv_req_notify_cq(cq_, 0);
    armed_ = true;
    set_nonblocking(comp_->fd);
  }
  post_work();  // every receive, before the connection exists
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {completion_fd(), cm_events_->fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  return !eng_->failed();
}

}  // namespace riomesh::channels::verbs
