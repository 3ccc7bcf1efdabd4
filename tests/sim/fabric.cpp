#include "fabric.hpp"

#include <algorithm>
#include <cstring>

namespace riomesh::sim {

using engine::completion_status;
using engine::work_kind;

engine::region endpoint::register_memory(void* base, std::size_t length, bool remote_write,
                                         bool remote_read, bool remote_atomic) {
  std::uint32_t key = next_key_++;
  mrs_[key] = {static_cast<unsigned char*>(base), length, remote_write, remote_read, remote_atomic};
  return {static_cast<unsigned char*>(base), length, key, key};
}

void endpoint::deregister(std::uint32_t lkey) {
  mrs_.erase(lkey);
}

const endpoint::mr* endpoint::find(std::uint32_t key) const {
  auto it = mrs_.find(key);
  return it == mrs_.end() ? nullptr : &it->second;
}

void endpoint::violation(const std::string& what) {
  ++stats_.violations;
  stats_.last_violation = what;
}

void endpoint::post(const engine::work& w) {
  if (w.kind == work_kind::post_recv) {
    if (error_) {
      for (std::uint32_t i = 0; i < w.recv_count; ++i)
        cq_.push_back({true, {}, {0, 0, completion_status::flushed, "flushed"}});
      return;
    }
    receives_ += w.recv_count;
    if (receives_ > rq_capacity_)
      violation("receive queue overflow: " + std::to_string(receives_) + " posted");
    return;
  }
  if (error_) {
    cq_.push_back({false, {w.wr_id, completion_status::flushed, "flushed"}, {}});
    return;
  }
  if (to_execute_.size() + to_ack_.size() >= sq_size_)
    violation("send queue overflow: work request " + std::to_string(w.wr_id));
  to_execute_.push_back({w});
}

std::vector<completion> endpoint::poll(std::size_t max) {
  std::vector<completion> out;
  while (!cq_.empty() && out.size() < max) {
    out.push_back(std::move(cq_.front()));
    cq_.pop_front();
  }
  return out;
}

// The requester's QP enters the error state: requests placed before the
// failing one still complete, the failing one reports why, the rest flush.
void endpoint::fail_qp(std::uint64_t wr_id, completion_status why, const std::string& detail) {
  for (const auto& done : to_ack_)
    cq_.push_back({false, {done.work.wr_id, completion_status::success, {}}, {}});
  to_ack_.clear();
  if (wr_id != 0)
    cq_.push_back({false, {wr_id, why, detail}, {}});
  for (const auto& rest : to_execute_)
    if (rest.work.wr_id != wr_id)
      cq_.push_back({false, {rest.work.wr_id, completion_status::flushed, "flushed"}, {}});
  to_execute_.clear();
  for (std::uint32_t i = 0; i < receives_; ++i)
    cq_.push_back({true, {}, {0, 0, completion_status::flushed, "flushed"}});
  receives_ = 0;
  error_ = true;
}

fabric::fabric(std::uint64_t seed, std::uint32_t sq_size, std::uint32_t rq_capacity,
               std::uint32_t rnr_retry)
    : rng_(seed),
      rnr_retry_(rnr_retry),
      a_(*this, sq_size, rq_capacity),
      b_(*this, sq_size, rq_capacity) {}

bool fabric::execute(endpoint& from, endpoint& to) {
  auto& head = from.to_execute_.front();
  const auto& w = head.work;
  std::uint64_t length = w.length();
  bool read = w.kind == work_kind::read;
  bool atomic = w.kind == work_kind::fetch_add || w.kind == work_kind::compare_swap;
  // Check the local SGEs first (a bad lkey is the requester's own fault)
  // and gather what a write sends.
  std::vector<unsigned char> payload;
  payload.reserve(length);
  for (std::uint8_t i = 0; i < w.num_sge; ++i) {
    const auto& s = w.sge[i];
    const auto* m = from.find(s.lkey);
    auto base = m ? reinterpret_cast<std::uint64_t>(m->base) : 0;
    if (!m || s.addr < base || s.addr - base > m->length ||
        s.length > m->length - (s.addr - base)) {
      from.fail_qp(w.wr_id, completion_status::local_error, "local protection error");
      return true;
    }
    auto* p = reinterpret_cast<const unsigned char*>(s.addr);
    payload.insert(payload.end(), p, p + s.length);
  }
  if (atomic && (length != 8 || w.remote_addr % 8 != 0)) {
    from.fail_qp(w.wr_id, completion_status::local_error, "atomic not on an aligned 8-byte word");
    return true;
  }
  unsigned char* dst = nullptr;
  if (length > 0) {
    // The responder checks key, access and bounds, overflow-safe.
    const auto* m = to.find(w.rkey);
    auto base = m ? reinterpret_cast<std::uint64_t>(m->base) : 0;
    bool allowed = m && (read ? m->remote_read : atomic ? m->remote_atomic : m->remote_write);
    if (!allowed || w.remote_addr < base || w.remote_addr - base > m->length ||
        length > m->length - (w.remote_addr - base)) {
      ++from.stats_.remote_access_errors;
      from.fail_qp(w.wr_id, completion_status::remote_access, "remote access error");
      return true;
    }
    dst = reinterpret_cast<unsigned char*>(w.remote_addr);
  }
  if (w.kind == work_kind::write_with_imm) {
    if (to.receives_ == 0) {
      ++from.stats_.rnr_naks;
      if (rnr_retry_ != 7 && ++head.rnr_attempts > rnr_retry_) {
        from.fail_qp(w.wr_id, completion_status::rnr_retry_exceeded, "RNR retry exceeded");
        return true;
      }
      return false;  // stays at the head: nothing behind it may pass
    }
    --to.receives_;
  }
  if (read) {
    // The responder's bytes, scattered into the requester's SGEs.
    const unsigned char* src = dst;
    for (std::uint8_t i = 0; i < w.num_sge; ++i) {
      std::memcpy(reinterpret_cast<unsigned char*>(w.sge[i].addr), src, w.sge[i].length);
      src += w.sge[i].length;
    }
  } else if (atomic) {
    std::uint64_t old = 0;
    std::memcpy(&old, dst, 8);
    std::uint64_t now = w.kind == work_kind::fetch_add ? old + w.compare_add
                        : old == w.compare_add         ? w.swap
                                                       : old;
    std::memcpy(dst, &now, 8);
    std::memcpy(reinterpret_cast<unsigned char*>(w.sge[0].addr), &old, 8);
  } else if (length > 0) {
    std::memcpy(dst, payload.data(), length);
  }
  ++from.stats_.writes;
  from.stats_.bytes_placed += length;
  if (w.kind == work_kind::write_with_imm)
    to.cq_.push_back(
        {true, {}, {w.imm, static_cast<std::uint32_t>(length), completion_status::success, {}}});
  from.to_ack_.push_back(std::move(head));
  from.to_execute_.pop_front();
  return true;
}

void fabric::ack(endpoint& from) {
  from.cq_.push_back(
      {false, {from.to_ack_.front().work.wr_id, completion_status::success, {}}, {}});
  from.to_ack_.pop_front();
}

bool fabric::step() {
  if (cut_)
    return false;
  // Candidate events: 0/1 = A/B places its next write, 2/3 = A/B gets an ack.
  int candidates[4];
  int n = 0;
  if (!a_.error_ && !a_.to_execute_.empty())
    candidates[n++] = 0;
  if (!b_.error_ && !b_.to_execute_.empty())
    candidates[n++] = 1;
  if (!a_.to_ack_.empty())
    candidates[n++] = 2;
  if (!b_.to_ack_.empty())
    candidates[n++] = 3;
  while (n > 0) {
    int pick = static_cast<int>(rng_() % static_cast<std::uint64_t>(n));
    int c = candidates[pick];
    bool progressed = true;
    switch (c) {
      case 0:
        progressed = execute(a_, b_);
        break;
      case 1:
        progressed = execute(b_, a_);
        break;
      case 2:
        ack(a_);
        break;
      default:
        ack(b_);
        break;
    }
    if (progressed)
      return true;
    candidates[pick] = candidates[--n];  // an RNR wait: try another event
  }
  return false;
}

void fabric::cut(const std::string& why) {
  if (cut_)
    return;
  cut_ = true;
  for (endpoint* e : {&a_, &b_}) {
    if (e->error_)
      continue;
    // Whatever was not acknowledged times out: the oldest reports it.
    std::uint64_t first = 0;
    if (!e->to_ack_.empty())
      first = e->to_ack_.front().work.wr_id;
    else if (!e->to_execute_.empty())
      first = e->to_execute_.front().work.wr_id;
    auto unacked = std::move(e->to_ack_);
    e->to_ack_.clear();
    for (auto it = unacked.rbegin(); it != unacked.rend(); ++it)
      e->to_execute_.push_front(*it);
    e->fail_qp(first, completion_status::retry_exceeded, "transport retry exceeded: " + why);
  }
}

}  // namespace riomesh::sim
