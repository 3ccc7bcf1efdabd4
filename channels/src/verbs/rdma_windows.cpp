// What a connection exposes to its peer, and how only that peer reaches
// it. In the node's shared protection domain a registration's remote key
// would work on every queue pair, so exposed memory is registered for
// local access and window binding only, and the peer gets the key of a
// type 2 memory window bound to this connection's queue pair: another
// connection's write with it fails (and fails that connection alone).
// Each window covers one whole registration, so bounds hold even on
// devices that check a window's access against its memory region only
// (rxe). With a private domain the registration itself is exposed.
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include "cm_support.hpp"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <thread>

namespace riomesh::channels::verbs {

using detail::sys_error;

namespace {

// The peer's rights over a map, as verbs access flags.
int remote_access(std::uint8_t access) {
  return ((access & map_access::write) ? IBV_ACCESS_REMOTE_WRITE : 0) |
         ((access & map_access::read) ? IBV_ACCESS_REMOTE_READ : 0) |
         ((access & map_access::atomic) ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

}  // namespace

bool rdma_channel::expose(void* base, std::size_t n, exposure& out, std::string& error, int dmabuf,
                          std::uint8_t access) {
  out.access = access;
  int flags = IBV_ACCESS_LOCAL_WRITE | (windows_ ? IBV_ACCESS_MW_BIND : remote_access(access));
  out.mr = dev_->register_region(base, n, flags, error, dmabuf);
  if (!out.mr)
    return false;
  if (!windows_) {
    out.rkey = out.mr->rkey;
    return true;
  }
  out.mw = ibv_alloc_mw(pd_, IBV_MW_TYPE_2);
  if (!out.mw) {
    error = sys_error("cannot allocate a memory window on " + dev_->name());
    return false;
  }
  // The key the bind will give it, known now: the peer may learn it first.
  out.rkey = ibv_inc_rkey(out.mw->rkey);
  return true;
}

bool rdma_channel::bind(exposure& x, std::string& error) {
  if (!x.mw)
    return true;
  // A gathered buffer maps piece by piece, a window each: the queue has
  // room for bind_slots binds, and binds complete at once, so take in the
  // earlier ones' completions first.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(params_.timeout_ms);
  while (binds_in_flight_ >= bind_slots && std::chrono::steady_clock::now() < deadline) {
    if (!poll_completions())
      std::this_thread::yield();
  }
  if (binds_in_flight_ >= bind_slots) {
    error = "more than " + std::to_string(bind_slots) + " memory window binds at once";
    return false;
  }
  ibv_send_wr wr{};
  wr.wr_id = bind_tag;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = x.mw;
  wr.bind_mw.rkey = x.rkey;
  wr.bind_mw.bind_info.mr = x.mr;
  wr.bind_mw.bind_info.addr = reinterpret_cast<std::uint64_t>(x.mr->addr);
  wr.bind_mw.bind_info.length = x.mr->length;
  wr.bind_mw.bind_info.mw_access_flags = static_cast<unsigned>(remote_access(x.access));
  ibv_send_wr* bad = nullptr;
  errno = ibv_post_send(qp_, &wr, &bad);
  if (errno != 0) {
    error = sys_error("cannot bind a memory window of " + std::to_string(x.mr->length) +
                      " bytes on " + dev_->name());
    return false;
  }
  ++binds_in_flight_;
  return true;
}

void rdma_channel::conceal(exposure& x) {
  // A window goes before its region: a region with a window bound over it
  // cannot be deregistered.
  if (x.mw)
    ibv_dealloc_mw(x.mw);
  if (x.mr)
    dev_->deregister(x.mr);
  x = exposure{};
}

bool rdma_channel::ready_own_qp(std::string& error) {
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = IBV_QPS_RTR;
  if (rdma_init_qp_attr(id_, &attr, &mask) != 0) {
    error = sys_error("cannot get the queue pair's RTR attributes");
    return false;
  }
  // As the connection parameters say (0 for rsocket peers), and open to
  // the peer's reads and atomics only if there are any.
  attr.max_dest_rd_atomic = static_cast<std::uint8_t>(read_depth_);
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
                         (read_depth_ > 0 ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
  mask |= IBV_QP_ACCESS_FLAGS;
  if (ibv_modify_qp(qp_, &attr, mask) != 0) {
    error = sys_error("cannot take the queue pair to RTR");
    return false;
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  if (rdma_init_qp_attr(id_, &attr, &mask) != 0) {
    error = sys_error("cannot get the queue pair's RTS attributes");
    return false;
  }
  attr.max_rd_atomic = static_cast<std::uint8_t>(read_depth_);
  if (ibv_modify_qp(qp_, &attr, mask) != 0) {
    error = sys_error("cannot take the queue pair to RTS");
    return false;
  }
  if (!bind(target_x_, error) || !bind(ring_x_, error))
    return false;
  // Nothing else can complete yet: no peer has written.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(params_.timeout_ms);
  while (binds_in_flight_ > 0) {
    bool got = poll_completions();
    if (eng_->failed()) {
      error = "the connection's memory windows: " + eng_->reason();
      return false;
    }
    if (!got && std::chrono::steady_clock::now() > deadline) {
      error = "the connection's memory window binds did not complete within " +
              std::to_string(params_.timeout_ms) + " ms";
      return false;
    }
    if (!got)
      std::this_thread::yield();
  }
  return true;
}

void rdma_channel::settle_reads() {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(qp_, &attr,
                   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ACCESS_FLAGS,
                   &init) != 0) {
    read_depth_ = 0;
    notes_.push_back(sys_error("no one-sided reads: cannot query the queue pair"));
    eng_->set_read_depth(0);
    return;
  }
  // Both ways or not at all: a map this side exposes for reading is only
  // useful if the peer may read it, and the peer's only if we may.
  read_depth_ = std::min<std::uint32_t>(attr.max_rd_atomic, attr.max_dest_rd_atomic);
  constexpr int open = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  if (read_depth_ > 0 && (attr.qp_access_flags & open) != open) {
    // A queue pair that rdma_cm moved to INIT before the connection's
    // parameters were known may not have them.
    ibv_qp_attr change{};
    change.qp_access_flags = static_cast<unsigned>(attr.qp_access_flags) | open;
    if (ibv_modify_qp(qp_, &change, IBV_QP_ACCESS_FLAGS) != 0) {
      notes_.push_back(sys_error("no one-sided reads: cannot open the queue pair to them"));
      read_depth_ = 0;
    }
  }
  eng_->set_read_depth(read_depth_);
}

void rdma_channel::disconnect() {
  if (own_qp_ && qp_) {
    // rdma_cm moves only the queue pairs it created to the error state;
    // ours must flush what is posted too.
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp_, &attr, IBV_QP_STATE);
  }
  rdma_disconnect(id_);
  disconnected_ = true;
}

}  // namespace riomesh::channels::verbs
