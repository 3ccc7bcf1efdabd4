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

bool rdma_channel::expose(void* base, std::size_t n, exposure& out, std::string& error,
                          int dmabuf) {
  int access = IBV_ACCESS_LOCAL_WRITE | (windows_ ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_WRITE);
  out.mr = dev_->register_region(base, n, access, error, dmabuf);
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
  wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
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
  attr.max_dest_rd_atomic = 0;  // as the connection parameters: no RDMA READ
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
  attr.max_rd_atomic = 0;
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
