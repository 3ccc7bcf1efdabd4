// The rdma channel's data path: posting the engine's work, taking in
// completions and connection manager events, the application calls.
#include <riomesh/channels/verbs/rdma_channel.hpp>

#include "cm_support.hpp"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <limits>

namespace riomesh::channels::verbs {
namespace {

using detail::sys_error;

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

const char* opcode_name(engine::work_kind k) {
  switch (k) {
    case engine::work_kind::write_with_imm:
      return "WRITE_IMM";
    case engine::work_kind::read:
      return "READ";
    case engine::work_kind::fetch_add:
      return "FETCH_ADD";
    case engine::work_kind::compare_swap:
      return "CMP_SWAP";
    default:
      return "WRITE";
  }
}

}  // namespace

void rdma_channel::post_work() {
  work_.clear();
  eng_->take_work(work_);
  if (holding_) {
    auto sends = std::stable_partition(work_.begin(), work_.end(), [](const engine::work& w) {
      return w.kind == engine::work_kind::post_recv;
    });
    held_.insert(held_.end(), sends, work_.end());
    work_.erase(sends, work_.end());
  } else if (!held_.empty()) {
    work_.insert(work_.begin(), held_.begin(), held_.end());
    held_.clear();
  }
  // Consecutive writes go out as one chain: one doorbell for what a wake
  // produced, not one per message.
  constexpr std::size_t chain_max = 32;
  ibv_send_wr wrs[chain_max];
  ibv_sge sges[chain_max][engine::max_work_sges];
  const engine::work* posted[chain_max];
  std::size_t chained = 0;
  auto fail = [&](int rc, const engine::work& w) {
    errno = rc;
    eng_->fail(sys_error("peer " + peer_ + ": cannot post " +
                         (w.kind == engine::work_kind::post_recv
                              ? std::to_string(w.recv_count) + " receives"
                              : "a " + std::to_string(w.length()) + "-byte " + opcode_name(w.kind) +
                                    (w.inline_data ? " (inline)" : ""))));
  };
  auto post_chain = [&]() {
    if (chained == 0)
      return true;
    for (std::size_t i = 0; i < chained; ++i)
      wrs[i].next = i + 1 < chained ? &wrs[i + 1] : nullptr;
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(qp_, wrs, &bad);
    std::size_t failed = bad ? static_cast<std::size_t>(bad - wrs) : 0;
    chained = 0;
    if (rc == 0)
      return true;
    fail(rc, *posted[failed < chain_max ? failed : 0]);
    return false;
  };
  for (const auto& w : work_) {
    if (w.kind == engine::work_kind::post_recv) {
      if (!post_chain())
        return;
      int rc = 0;
      // Zero-SGE receives: only WRITE WITH IMMEDIATE may consume them.
      for (std::uint32_t left = w.recv_count; left > 0 && rc == 0;) {
        ibv_recv_wr rwrs[32] = {};
        std::uint32_t n = std::min<std::uint32_t>(left, 32);
        for (std::uint32_t i = 0; i < n; ++i)
          rwrs[i].next = i + 1 < n ? &rwrs[i + 1] : nullptr;
        ibv_recv_wr* bad = nullptr;
        rc = ibv_post_recv(qp_, rwrs, &bad);
        left -= n;
      }
      if (rc != 0)
        return fail(rc, w);
      continue;
    }
    auto& wr = wrs[chained];
    wr = ibv_send_wr{};
    auto* sge = sges[chained];
    for (std::uint8_t i = 0; i < w.num_sge; ++i)
      sge[i] = {w.sge[i].addr, w.sge[i].length, w.sge[i].lkey};
    wr.wr_id = w.wr_id;
    wr.sg_list = sge;
    wr.num_sge = w.num_sge;
    wr.send_flags =
        IBV_SEND_SIGNALED | (w.inline_data ? IBV_SEND_INLINE : 0) | (w.fence ? IBV_SEND_FENCE : 0);
    switch (w.kind) {
      case engine::work_kind::fetch_add:
      case engine::work_kind::compare_swap:
        wr.opcode = w.kind == engine::work_kind::fetch_add ? IBV_WR_ATOMIC_FETCH_AND_ADD
                                                           : IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.remote_addr = w.remote_addr;
        wr.wr.atomic.rkey = w.rkey;
        wr.wr.atomic.compare_add = w.compare_add;
        wr.wr.atomic.swap = w.swap;
        break;
      default:
        wr.opcode = w.kind == engine::work_kind::write_with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM
                    : w.kind == engine::work_kind::read         ? IBV_WR_RDMA_READ
                                                                : IBV_WR_RDMA_WRITE;
        wr.imm_data = wire::to_wire(w.imm);
        wr.wr.rdma.remote_addr = w.remote_addr;
        wr.wr.rdma.rkey = w.rkey;
        break;
    }
    posted[chained++] = &w;
    if (chained == chain_max && !post_chain())
      return;
  }
  post_chain();
}

void rdma_channel::on_completion(const ibv_wc& wc) {
  auto st = status_of(wc.status);
  std::string detail =
      st == engine::completion_status::success ? std::string{} : ibv_wc_status_str(wc.status);
  if (wc.wr_id & bind_tag) {
    --binds_in_flight_;
    if (st != engine::completion_status::success)
      eng_->fail("binding a memory window failed: " + detail);
  } else if (wc.wr_id == 0) {  // receives carry id 0, sends never do
    holding_ = false;          // the peer wrote: its windows are bound
    eng_->on_recv_completion({wire::from_wire(wc.imm_data), wc.byte_len, st, detail});
  } else {
    eng_->on_send_completion({wc.wr_id, st, detail});
  }
}

bool rdma_channel::poll_completions(bool force) {
  bool any = false;
  if (shared_) {
    while (inbox_ && shared_->collect(*inbox_, cq_seen_, force, mail_)) {
      any = true;
      for (const auto& wc : mail_)
        on_completion(wc);
      mail_.clear();
      post_work();
    }
    return any;
  }
  ibv_wc wc[32];
  for (;;) {
    int n = ibv_poll_cq(cq_, 32, wc);
    if (n <= 0)
      return any;
    any = true;
    for (int i = 0; i < n; ++i)
      on_completion(wc[i]);
    post_work();
  }
}

int rdma_channel::completion_fd() const {
  return shared_ ? inbox_->kick_fd() : comp_->fd;
}

void rdma_channel::handle_cm_events() {
  rdma_cm_event* ev = nullptr;
  while (rdma_get_cm_event(cm_events_, &ev) == 0) {
    if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
      establishing_since_.reset();
    } else if (establishing_since_ &&
               (ev->event == RDMA_CM_EVENT_CONNECT_ERROR ||
                ev->event == RDMA_CM_EVENT_UNREACHABLE || ev->event == RDMA_CM_EVENT_REJECTED)) {
      eng_->fail(std::string{"the peer never completed the connection: "} +
                 rdma_event_str(ev->event));
    } else if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
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
  if (shared_)
    shared_->wake(*inbox_);
  // One look at which of our two fds has something (a system call costs
  // more than everything else here, so: one, not a read on each).
  epoll_event ready[2];
  int n = epoll_wait(epoll_fd_, ready, 2, 0);
  bool cm_ready = false;
  for (int i = 0; i < n; ++i) {
    if (ready[i].data.fd != completion_fd()) {
      cm_ready = true;
      continue;
    }
    if (shared_) {
      inbox_->take_kick();
      continue;
    }
    // The completion channel's signal: the queue is now unarmed.
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    if (ibv_get_cq_event(comp_, &cq, &context) == 0) {
      ibv_ack_cq_events(cq, 1);
      armed_ = false;
    }
  }
  poll_completions();
  // Re-arm, then poll again: a completion that landed between the last
  // poll and the arming would otherwise wake nobody.
  if (shared_) {
    if (shared_->sleep(*inbox_))
      poll_completions();
  } else if (!armed_) {
    ibv_req_notify_cq(cq_, 0);
    armed_ = true;
    poll_completions();
  }
  if (cm_ready)
    handle_cm_events();  // after the completions that came before them
  post_work();
  // Closed is not done: our last writes may still await their
  // acknowledgements, and disconnecting flushes them. Wait for them (they
  // complete, or fail if the peer is gone).
  if (eng_->closed() && (eng_->drained() || eng_->failed()) && !disconnected_) {
    disconnect();  // the peer's connection manager learns of it
  }
}

bool rdma_channel::busy_poll() {
  if (shared_)
    shared_->wake(*inbox_);
  return poll_completions(false);
}

void rdma_channel::on_progress_thread() {
  if (inbox_)
    inbox_->spun.store(true);
}

bool rdma_channel::arm() {
  if (shared_)
    return shared_->sleep(*inbox_) && poll_completions();
  if (armed_)
    return false;
  ibv_req_notify_cq(cq_, 0);
  armed_ = true;
  return poll_completions();  // what landed before the arming
}

void rdma_channel::cork(bool on) {
  corked_ = on;
  if (!on)
    post_work();
}

io_result rdma_channel::send(const void* data, std::size_t length) {
  auto r = eng_->send(data, length);
  if (!corked_)
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

map_result rdma_channel::map(void* base, std::size_t length, std::optional<std::uint64_t> offset,
                             std::uint8_t access) {
  return map_exposed(base, length, -1, offset, access);
}

map_result rdma_channel::map_dmabuf(void* base, std::size_t length, int fd,
                                    std::optional<std::uint64_t> offset) {
  return map_exposed(base, length, fd, offset, map_access::write);
}

map_result rdma_channel::map_exposed(void* base, std::size_t length, int dmabuf,
                                     std::optional<std::uint64_t> offset, std::uint8_t access) {
  constexpr std::uint8_t known = map_access::write | map_access::read | map_access::atomic;
  if (access & map_access::once)
    return {status::unsupported};  // placements are not seen here, so not counted
  if (access == 0 || (access & ~known) != 0)
    return {status::invalid};
  if (access != map_access::write && read_depth_ == 0)
    return {status::unsupported};
  exposure x;
  std::string error;
  // The bind goes out before the engine's update of the peer's iomap: the
  // peer cannot write through the window before it is bound.
  if (!expose(base, length, x, error, dmabuf, access) || !bind(x, error)) {
    conceal(x);
    return {status::invalid};
  }
  auto r =
      eng_->riomap({static_cast<unsigned char*>(base), length, x.mr->lkey, x.rkey}, true, offset);
  post_work();
  if (r.st != status::ok) {
    conceal(x);
    return {r.st};
  }
  maps_[r.offset] = x;
  return {status::ok, r.offset};
}

status rdma_channel::unmap(std::uint64_t offset) {
  auto it = maps_.find(offset);
  if (it == maps_.end())
    return status::invalid;
  auto st =
      eng_->riounmap(reinterpret_cast<std::uint64_t>(it->second.mr->addr), it->second.mr->length);
  post_work();
  conceal(it->second);
  maps_.erase(it);
  return st;
}

io_result rdma_channel::iowrite(const void* source, std::size_t length, std::uint64_t offset,
                                std::uint64_t token) {
  if (length == 0)
    return {0, status::ok};
  std::vector<ibv_mr*> own;
  auto lkey = key_for(source, length, own);
  if (!lkey)
    return {0, status::invalid};
  auto r = eng_->riowrite(
      {reinterpret_cast<std::uint64_t>(source), static_cast<std::uint32_t>(length), *lkey}, offset,
      token);
  keep_for_call(r, token, own);
  if (!corked_)
    post_work();
  return r;
}

// Outside pinned registrations, registered for this call only: a cached
// registration could outlive the caller's buffer and pin whatever pages
// come to live there (the shared cache is where reuse belongs).
std::optional<std::uint32_t> rdma_channel::key_for(const void* p, std::size_t n,
                                                   std::vector<ibv_mr*>& own) {
  if (auto lkey = registered(p, n))
    return lkey;
  std::string error;
  auto* mr = dev_->register_region(const_cast<void*>(p), n, IBV_ACCESS_LOCAL_WRITE, error);
  if (!mr)
    return std::nullopt;
  own.push_back(mr);
  return mr->lkey;
}

// A call that went keeps its own registrations until its done event; one
// that did not gives them back now.
void rdma_channel::keep_for_call(const io_result& r, std::uint64_t token,
                                 std::vector<ibv_mr*>& own) {
  if (r.bytes > 0) {
    sources_[token].push_back(std::move(own));
    return;
  }
  for (auto* mr : own)
    dev_->deregister(mr);
}

io_result rdma_channel::ioread(const destination* into, std::size_t count, std::uint64_t offset,
                               std::uint64_t token) {
  if (read_depth_ == 0)
    return {0, status::unsupported};
  scratch_sges_.clear();
  std::vector<ibv_mr*> own;
  for (std::size_t i = 0; i < count; ++i) {
    if (into[i].length == 0)
      continue;
    if (into[i].length > std::numeric_limits<std::uint32_t>::max())
      return {0, status::invalid};
    auto lkey = key_for(into[i].data, into[i].length, own);
    if (!lkey) {
      keep_for_call({}, token, own);
      return {0, status::invalid};
    }
    scratch_sges_.push_back({reinterpret_cast<std::uint64_t>(into[i].data),
                             static_cast<std::uint32_t>(into[i].length), *lkey});
  }
  if (scratch_sges_.empty())
    return {0, status::ok};
  auto r = eng_->rioread(scratch_sges_.data(), scratch_sges_.size(), offset, token);
  keep_for_call(r, token, own);
  if (!corked_)
    post_work();
  return r;
}

io_result rdma_channel::ioatomic(atomic_op op, std::uint64_t offset, std::uint64_t a,
                                 std::uint64_t b, std::uint64_t token) {
  if (read_depth_ == 0)
    return {0, status::unsupported};
  if (!atomic_mr_) {
    // As many words as atomics may be in flight: the queue pair's depth
    // holds back the rest, whose words wait with them.
    atomic_words_.assign(std::max<std::uint32_t>(read_depth_, 1) * 4, 0);
    std::string error;
    atomic_mr_ = dev_->register_region(atomic_words_.data(), atomic_words_.size() * 8,
                                       IBV_ACCESS_LOCAL_WRITE, error);
    if (!atomic_mr_)
      return {0, status::invalid};
    for (auto i = static_cast<std::uint32_t>(atomic_words_.size()); i > 0; --i)
      free_words_.push_back(i - 1);
  }
  if (free_words_.empty())
    return {0, status::would_block};
  auto word = free_words_.back();
  engine::local_sge result{reinterpret_cast<std::uint64_t>(&atomic_words_[word]), 8,
                           atomic_mr_->lkey};
  auto r = eng_->rioatomic(
      op == atomic_op::fetch_add ? engine::work_kind::fetch_add : engine::work_kind::compare_swap,
      result, offset, a, b, token);
  if (r.bytes > 0) {
    free_words_.pop_back();
    atomic_word_of_[token] = word;
  }
  if (!corked_)
    post_work();
  return r;
}

io_result rdma_channel::iowrite_pieces(const piece* pieces, std::size_t count, std::uint64_t offset,
                                       std::uint64_t token) {
  // All pieces registered (pinned by the caller, or in the shared cache):
  // one riowrite, the pieces sharing work requests. Otherwise the first
  // piece alone, registered for the call if need be.
  scratch_sges_.clear();
  for (std::size_t i = 0; i < count; ++i) {
    auto lkey = pieces[i].length > 0 ? registered(pieces[i].data, pieces[i].length)
                                     : std::optional<std::uint32_t>{0};
    if (!lkey || pieces[i].length > std::numeric_limits<std::uint32_t>::max())
      return count == 0 ? io_result{0, status::ok}
                        : iowrite(pieces[0].data, pieces[0].length, offset, token);
    if (pieces[i].length > 0)
      scratch_sges_.push_back({reinterpret_cast<std::uint64_t>(pieces[i].data),
                               static_cast<std::uint32_t>(pieces[i].length), *lkey});
  }
  if (scratch_sges_.empty())
    return {0, status::ok};
  auto r = eng_->riowrite_sges(scratch_sges_.data(), scratch_sges_.size(), offset, token);
  if (!corked_)
    post_work();
  return r;
}

std::optional<memory_pin> rdma_channel::pin_memory(const void* base, std::size_t length,
                                                   std::shared_ptr<const void> keep) {
  auto p = dev_->sends().acquire(base, length, std::move(keep));
  if (!p)
    return std::nullopt;
  last_pin_ = p->id;
  last_pinned_ = p->reg;
  return memory_pin{p->id, p->fresh};
}

void rdma_channel::unpin_memory(std::uint64_t id) {
  if (id == last_pin_)
    last_pin_ = 0;
  dev_->sends().unpin(id);
}

std::optional<std::uint32_t> rdma_channel::registered(const void* p, std::size_t n) const {
  if (last_pin_ != 0 && last_pinned_.covers(reinterpret_cast<std::uintptr_t>(p), n))
    return last_pinned_.lkey;
  auto r = dev_->sends().covering(p, n);
  if (!r)
    return std::nullopt;
  return r->lkey;
}

bool rdma_channel::take_events(std::vector<event>& out) {
  std::size_t first = out.size();
  bool any = eng_->take_events(out);
  for (std::size_t i = first; i < out.size(); ++i) {
    auto& e = out[i];
    if (e.kind == event_kind::ioatomic_done) {
      if (auto w = atomic_word_of_.find(e.token); w != atomic_word_of_.end()) {
        e.value = atomic_words_[w->second];
        free_words_.push_back(w->second);
        atomic_word_of_.erase(w);
      }
      continue;
    }
    if (e.kind != event_kind::iowrite_done && e.kind != event_kind::ioread_done)
      continue;
    auto it = sources_.find(e.token);
    if (it == sources_.end() || it->second.empty())
      continue;
    for (auto* mr : it->second.front())
      dev_->deregister(mr);
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

namespace {

// The longest a live peer's device may take to take in `bytes`: at 8 MiB/s,
// a sixth of what soft-RoCE moves under emulation, so that one large
// write (64 MiB) is never taken for a vanished peer.
std::chrono::nanoseconds wire_time_floor(std::uint64_t bytes) {
  constexpr std::uint64_t floor_bytes_per_second = 8ull << 20;
  return std::chrono::nanoseconds(bytes * 1'000'000'000ull / floor_bytes_per_second);
}

}  // namespace

void rdma_channel::tick(std::chrono::steady_clock::time_point now) {
  if (eng_->closed())
    return;
  if (establishing_since_ &&
      now - *establishing_since_ >= std::chrono::milliseconds(params_.timeout_ms))
    return eng_->fail("the peer did not complete the connection within " +
                      std::to_string(params_.timeout_ms) + " ms of our accepting it");
  // Each keepalive is a work request the peer's device must acknowledge.
  // Where the peer vanished, rxe was seen retrying it for minutes without
  // failing it: the oldest request outliving the peer timeout, plus the
  // time its bytes take at a floor rate, ends the connection here.
  const auto* oldest = eng_->oldest_posted();
  if (!oldest) {
    oldest_wr_.reset();
  } else if (!oldest_wr_ || oldest_wr_->first != oldest->wr_id) {
    oldest_wr_.emplace(oldest->wr_id, now);
  } else if (params_.peer_timeout.count() > 0) {
    auto allowed = params_.peer_timeout + wire_time_floor(oldest->bytes);
    if (now - oldest_wr_->second > allowed) {
      auto ms = [](auto d) {
        return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
      };
      return eng_->fail("the peer's device acknowledged nothing for " +
                        ms(now - oldest_wr_->second) + " ms (peer_timeout " +
                        ms(params_.peer_timeout) + " ms, plus " +
                        ms(wire_time_floor(oldest->bytes)) + " ms for the " +
                        std::to_string(oldest->bytes) + " bytes of the request it waits on)");
    }
  }
  if (params_.keepalive.count() <= 0)
    return;
  if (now - last_keepalive_ >= params_.keepalive) {
    last_keepalive_ = now;
    keepalive();
  }
}

}  // namespace riomesh::channels::verbs
