// The receiving half of the rsocket engine: inbound immediates, checked
// against what was granted, the stream read path, and the SGL updates that
// hand ring space and credits back to the peer.
#include <riomesh/channels/engine/engine.hpp>

#include <algorithm>
#include <cstring>

namespace riomesh::engine {

io_result engine::recv(void* out, std::size_t length) {
  if (phase_ == phase::idle)
    return {0, status::invalid};
  if (!read_open_)
    return {0, status::shut_down};
  if (window_.empty()) {
    if (failed())
      return {0, status::closed};
    if (!peer_sending_ || phase_ == phase::disconnected)
      return {0, status::eof};
    return {0, status::would_block};
  }
  auto* dst = static_cast<unsigned char*>(out);
  std::size_t copied = 0;
  while (copied < length && !window_.empty()) {
    std::size_t n = std::min(window_.head_remaining(), length - copied);
    std::memcpy(dst + copied, mem_.recv_ring.base + window_.read_offset(), n);
    window_.consume(n);
    copied += n;
  }
  update_credits();
  return {copied, status::ok};
}

std::pair<const unsigned char*, std::size_t> engine::peek() const {
  if (window_.empty() || !read_open_)
    return {nullptr, 0};
  return {mem_.recv_ring.base + window_.read_offset(), window_.head_remaining()};
}

void engine::consume(std::size_t n) {
  while (n > 0 && !window_.empty()) {
    std::size_t step = std::min(n, window_.head_remaining());
    window_.consume(step);
    n -= step;
  }
  update_credits();
}

void engine::on_recv_completion(const recv_completion& c) {
  if (c.status != completion_status::success) {
    if (!closed())
      fail(std::string{"receive completion error: "} + to_string(c.status) +
           (c.detail.empty() ? "" : " (" + c.detail + ")"));
    return;
  }
  if (phase_ == phase::idle)
    return protocol_error("a message arrived before the connection was established");
  // Keep receives posted while the queue pair lives, even after a disconnect:
  // a peer whose last updates found none would retry them forever (rsockets
  // uses infinite receiver-not-ready retry) and hang in its own shutdown.
  repost_receive();
  if (phase_ != phase::connected)
    return;  // after a disconnect nothing more is taken in
  auto imm = wire::decode(c.imm);
  switch (imm.code) {
    case wire::op::data:
      on_data(imm.data, c.byte_len);
      break;
    case wire::op::sgl:
      on_sgl(imm.data, c.byte_len);
      break;
    case wire::op::iomap_sgl:
      on_iomap_sgl(imm.data, c.byte_len);
      break;
    case wire::op::ctrl:
      on_ctrl(imm.data);
      break;
    default:
      return protocol_error("unknown op " + std::to_string(static_cast<int>(imm.code)) +
                            " (immediate 0x" +
                            [&] {
                              char hex[9];
                              std::snprintf(hex, sizeof hex, "%08x", c.imm);
                              return std::string{hex};
                            }() +
                            ")");
  }
  update_credits();
  if (phase_ == phase::connected) {
    publish_iomaps();
    check_writable();
  }
}

void engine::on_data(std::uint32_t length, std::uint32_t byte_len) {
  if (byte_len != length)
    return protocol_error("DATA immediate says " + std::to_string(length) +
                          " bytes, the write carried " + std::to_string(byte_len));
  bool was_empty = window_.empty();
  // librdmacm lets rsend go on after its own rshutdown(SHUT_WR) while it
  // holds credits. The stream ended at the SHUTDOWN, so these bytes cannot
  // be delivered, but it is not broken either: they are counted, and
  // dropped (space and credit given back) once the bytes before them have
  // been read; whatever we still send the peer goes on.
  bool late = !peer_sending_;
  auto problem = window_.accept(length, late);
  if (!problem.empty())
    return protocol_error(problem);
  if (late) {
    late_bytes_ += length;
    return;
  }
  if (!read_open_)
    window_.consume(length);  // we shut reading down: drop, but free the space
  else if (was_empty)
    emit({event_kind::readable});
}

void engine::on_sgl(std::uint32_t data, std::uint32_t byte_len) {
  if (byte_len != 0 && byte_len != wire::sge_size)
    return protocol_error("SGL update of " + std::to_string(byte_len) + " bytes");
  // rseq_no + rq_size: at most 0xffff + 0xfffe; only the low 16 bits count.
  if (data > 0x1fffd)
    return protocol_error("SGL credit field " + std::to_string(data) + " out of range");
  auto limit = static_cast<std::uint16_t>(data);
  auto ahead = static_cast<std::uint16_t>(limit - sseq_no_);
  if (ahead > peer_credits_)
    return protocol_error("credit limit " + std::to_string(limit) + " grants " +
                          std::to_string(ahead) + " credits, beyond the peer's queue of " +
                          std::to_string(peer_credits_));
  sseq_comp_ = limit;
}

void engine::on_iomap_sgl(std::uint32_t index, std::uint32_t byte_len) {
  if (byte_len != wire::iomap_entry_size)
    return protocol_error("IOMAP_SGL of " + std::to_string(byte_len) + " bytes");
  if (index >= params_.iomap_slots)
    return protocol_error("IOMAP_SGL for slot " + std::to_string(index) + ", but " +
                          std::to_string(params_.iomap_slots) + " were offered");
  if (params_.iomap_credit)
    window_.count_message();
  emit({event_kind::peer_iomap, 0, 0, index});
}

void engine::on_ctrl(std::uint32_t code) {
  if (code == static_cast<std::uint32_t>(wire::ctrl_code::shutdown)) {
    // The peer stops sending; we may go on. If we stopped too, the end
    // comes once our own SHUTDOWN is acknowledged: closing before would
    // drop it unsent, and the peer would take our leaving for a loss.
    peer_sending_ = false;
    emit({event_kind::readable});
    if (shutdown_acked_)
      close(phase::disconnected, "peer disconnected");
    return;
  }
  if (code == static_cast<std::uint32_t>(wire::ctrl_code::disconnect)) {
    // The peer reads no more: what we still had for it is moot.
    peer_sending_ = false;
    emit({event_kind::readable});
    close(phase::disconnected, "peer disconnected");
    return;
  }
  protocol_error("unknown control code " + std::to_string(code));
}

void engine::repost_receive() {
  if (!work_.empty() && work_.back().kind == work_kind::post_recv) {
    ++work_.back().recv_count;
    return;
  }
  work w;
  w.kind = work_kind::post_recv;
  w.recv_count = 1;
  work_.push_back(w);
}

// Hands freed ring space and credits back (rsocket-wire.md §3.7), one update
// per control slot: control slots are reserved, so this never waits on data.
void engine::update_credits() {
  while (phase_ == phase::connected && queue_.control_available()) {
    auto kind = window_.due();
    if (kind == receive_window::update::none)
      return;
    std::uint32_t limit = window_.credit_limit();
    work w;
    w.kind = work_kind::write_with_imm;
    w.imm = *wire::encode({wire::op::sgl, limit});
    w.remote_addr = peer_sgl_.addr;
    w.rkey = peer_sgl_.key;
    if (kind == receive_window::update::publish_half) {
      std::size_t offset = window_.record_update(kind);
      unsigned char* payload =
          control_area_ + wire::sge_size * (queue_.control_posted() % queue_.control_slots());
      wire::encode(wire::sge{mem_.recv_ring.addr() + offset, mem_.recv_ring.rkey,
                             static_cast<std::uint32_t>(window_.half())},
                   payload, peer_order_);
      w.remote_addr = peer_sgl_.addr + wire::sge_size * remote_slot_;
      w.sge[0] = {reinterpret_cast<std::uint64_t>(payload), wire::sge_size, mem_.send_ring.lkey};
      w.num_sge = 1;
      w.inline_data = wire::sge_size <= params_.inline_size;
      remote_slot_ = (remote_slot_ + 1) % peer_sgl_.length;
    } else {
      window_.record_update(kind);
    }
    posted_wr record;
    record.role = wr_role::credit;
    post(w, record);
  }
}

}  // namespace riomesh::engine
