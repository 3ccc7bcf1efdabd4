// Lifecycle, completions and control messages of the rsocket engine.
#include <riomesh/channels/engine/engine.hpp>
#include <riomesh/channels/wire/iomap_size.hpp>

#include <algorithm>

namespace riomesh::engine {

engine::engine(const params& p, const regions& mem)
    : params_(p), mem_(mem), queue_(p.sq_size), window_(mem.recv_ring.length, p.rq_size) {
  // The control area (one 16-byte SGE per control slot) sits at the end of
  // the send ring's region, so credit updates never wait for stream space.
  std::size_t control_bytes = queue_.control_slots() * wire::sge_size;
  std::size_t ring_bytes =
      mem.send_ring.length > control_bytes ? mem.send_ring.length - control_bytes : 0;
  ring_ = staging_ring(mem.send_ring.base, ring_bytes, mem.send_ring.lkey);
  control_area_ = mem.send_ring.base + ring_bytes;
  low_water_ = std::max<std::uint32_t>(
      1, std::min<std::uint32_t>(wire::send_low_water, static_cast<std::uint32_t>(ring_bytes / 2)));
  if (ring_bytes < wire::iomap_entry_size || mem.recv_ring.length < 2 ||
      mem.recv_ring.length % 2 != 0 ||
      mem.target_list.length < wire::target_list_size(p.iomap_slots) || p.rq_size == 0 ||
      p.rq_size > wire::max_queue || p.sq_size < 2) {
    close(phase::failed, "engine: regions or queue sizes unusable");
    return;
  }
  // rsockets posts every receive before connecting. Beyond the credits, the
  // peer may have control messages in flight: post room for those too.
  work w;
  w.kind = work_kind::post_recv;
  w.recv_count = p.rq_size + wire::control_slots;
  work_.push_back(w);
}

wire::conn_data engine::local_conn_data() const {
  wire::conn_data cd;
  cd.flags = wire::flag_iomap;
  if (params_.iomap_credit)
    cd.flags |= wire::flag_iomap_credit;
  if (wire::host_order() == wire::byte_order::big)
    cd.flags |= wire::flag_big_endian;
  cd.credits = static_cast<std::uint16_t>(params_.rq_size);
  cd.target_iomap_size = wire::encode_iomap_size(params_.iomap_slots);
  cd.target_sgl = {mem_.target_list.addr(), mem_.target_list.rkey, wire::target_sgl_slots};
  cd.data_buf = {mem_.recv_ring.addr(), mem_.recv_ring.rkey,
                 static_cast<std::uint32_t>(window_.half())};
  return cd;
}

bool engine::start(const wire::conn_data& peer) {
  if (phase_ != phase::idle)
    return false;
  std::string problem;
  if (peer.credits == 0)
    problem = "the peer grants no credits";
  else if (peer.target_sgl.length < wire::target_sgl_slots || peer.target_sgl.length > 64)
    problem = "the peer offers " + std::to_string(peer.target_sgl.length) +
              " target SGL slots (2 expected)";
  else if (peer.data_buf.length == 0)
    problem = "the peer's receive buffer is empty";
  if (!problem.empty()) {
    close(phase::failed, "protocol error: " + problem);
    return false;
  }
  peer_order_ = peer.order();
  peer_sgl_ = peer.target_sgl;
  peer_credits_ = peer.credits;
  peer_counts_iomap_ = (peer.flags & wire::flag_iomap_credit) != 0;
  sseq_comp_ = peer.credits;
  if (peer.flags & wire::flag_iomap) {
    peer_iomap_ = {peer.target_sgl.addr + wire::sge_size * peer.target_sgl.length,
                   peer.target_sgl.key, wire::decode_iomap_size(peer.target_iomap_size)};
  }
  iomaps_.set_peer_slots(peer_iomap_.length);
  // Our slot 0 is the peer's first half. Slot 1 is left alone: it starts
  // zeroed, and the peer's first update may already have landed there (the
  // passive side can write before our connection manager reports it).
  wire::encode(peer.data_buf, mem_.target_list.base, wire::host_order());
  phase_ = phase::connected;
  update_credits();
  return true;
}

void engine::post(work w, posted_wr record) {
  if (record.role == wr_role::ioread || record.role == wr_role::ioatomic)
    ++reads_in_flight_;
  else if (reads_in_flight_ > 0)
    w.fence = true;
  record.bytes =
      w.kind == work_kind::fetch_add || w.kind == work_kind::compare_swap ? 8 : w.length();
  w.wr_id = queue_.post(record);
  work_.push_back(w);
}

void engine::send_pending_ctrl() {
  if (!pending_ctrl_ || phase_ != phase::connected || !queue_.control_available())
    return;
  work w;
  w.kind = work_kind::write_with_imm;
  w.remote_addr = peer_sgl_.addr;
  w.rkey = peer_sgl_.key;
  w.imm = *wire::encode({wire::op::ctrl, static_cast<std::uint32_t>(*pending_ctrl_)});
  posted_wr record;
  record.role = wr_role::ctrl;
  record.ctrl_code = static_cast<std::uint32_t>(*pending_ctrl_);
  pending_ctrl_.reset();
  end_posted_ = true;  // SHUTDOWN or DISCONNECT: behind all our data
  post(w, record);
}

status engine::shutdown(shutdown_how how) {
  if (failed())
    return status::closed;
  if (phase_ != phase::connected)
    return phase_ == phase::idle ? status::invalid : status::ok;
  bool was_reading = read_open_, was_writing = write_open_;
  if (how != shutdown_how::write && read_open_) {
    read_open_ = false;
    while (!window_.empty())  // nobody will read these: hand the space back
      window_.consume(window_.head_remaining());
  }
  if (how != shutdown_how::read)
    write_open_ = false;
  // Nothing new to tell: a second SHUTDOWN or DISCONNECT may find the peer
  // no longer posting receives, and then never complete.
  if (read_open_ == was_reading && write_open_ == was_writing)
    return status::ok;
  // As rsockets: SHUTDOWN while we still read, DISCONNECT once both are shut.
  if (!write_open_ && !read_open_)
    pending_ctrl_ = wire::ctrl_code::disconnect;
  else if (how != shutdown_how::read)
    pending_ctrl_ = wire::ctrl_code::shutdown;
  send_pending_ctrl();
  update_credits();
  return status::ok;
}

void engine::keepalive() {
  if (phase_ != phase::connected || !queue_.control_available())
    return;
  work w;  // zero-length WRITE, address 0, rkey 0: only the transport acks it
  w.kind = work_kind::write;
  posted_wr record;
  record.role = wr_role::keepalive;
  post(w, record);
}

void engine::on_send_completion(const send_completion& c) {
  auto record = queue_.complete(c.wr_id);
  if (!record) {
    if (!closed())
      fail("completion for work request " + std::to_string(c.wr_id) +
           ", which is not the oldest one posted");
    return;
  }
  ring_.release(record->ring_bytes);
  if (record->role == wr_role::ioread || record->role == wr_role::ioatomic)
    --reads_in_flight_;
  if (c.status != completion_status::success) {
    if (!closed())
      fail(std::string{"send completion error: "} + to_string(c.status) +
           (c.detail.empty() ? "" : " (" + c.detail + ")"));
    return;
  }
  if (record->role == wr_role::iowrite && record->last)
    emit({event_kind::iowrite_done, record->token, record->token_bytes, 0});
  if (record->role == wr_role::ioread && record->last)
    emit({event_kind::ioread_done, record->token, record->token_bytes, 0});
  if (record->role == wr_role::ioatomic)
    emit({event_kind::ioatomic_done, record->token, 8, 0});
  if (record->role == wr_role::ctrl &&
      record->ctrl_code == static_cast<std::uint32_t>(wire::ctrl_code::disconnect)) {
    // Its completion means every earlier write was acknowledged.
    close(phase::disconnected, "shut down locally");
    return;
  }
  if (record->role == wr_role::ctrl &&
      record->ctrl_code == static_cast<std::uint32_t>(wire::ctrl_code::shutdown)) {
    shutdown_acked_ = true;
    if (!peer_sending_) {
      close(phase::disconnected, "both directions shut down");
      return;
    }
  }
  if (phase_ != phase::connected)
    return;
  send_pending_ctrl();
  update_credits();
  publish_iomaps();
  check_writable();
}

void engine::on_disconnected(const std::string& why) {
  if (closed())
    return;
  // Both directions already ended in order: its SHUTDOWN came after all its
  // data, ours went out after all of ours. A peer closes cleanly only once
  // it has ours (or has stopped reading), so its leaving now is the end,
  // not a loss, even if acknowledgements of our last writes are still on
  // their way: the disconnect does not wait for them.
  if (!peer_sending_ && !write_open_ && end_posted_)
    close(phase::disconnected, "peer disconnected");
  else if (!peer_sending_)
    // It ended its stream in order and left before ours ended: it stopped.
    // Reads end as its stream did (all it sent stays readable, then end of
    // stream); our writes are cut off.
    close(phase::disconnected, "it stopped (shut its side down, then " + why + ")");
  else
    close(phase::failed, "peer gone: " + why);
}

void engine::fail(const std::string& why) {
  if (!closed())
    close(phase::failed, why);
}

void engine::protocol_error(const std::string& why) {
  fail("protocol error: " + why);
}

void engine::close(phase to, const std::string& why) {
  if (closed() && to != phase::failed)
    return;
  bool was_closed = closed();
  phase_ = to;
  if (reason_.empty() || to == phase::failed)
    reason_ = why;
  pending_ctrl_.reset();
  if (!was_closed)
    emit({event_kind::closed});
}

bool engine::take_work(std::vector<work>& out) {
  if (work_.empty())
    return false;
  out.insert(out.end(), work_.begin(), work_.end());
  work_.clear();
  return true;
}

bool engine::take_events(std::vector<event>& out) {
  if (events_.empty())
    return false;
  out.insert(out.end(), events_.begin(), events_.end());
  events_.clear();
  return true;
}

engine_state engine::state() const {
  engine_state s;
  s.sends = sseq_no_;
  s.send_limit = sseq_comp_;
  s.peer_credits = peer_credits_;
  s.consumed = window_.consumed();
  s.data_in_flight = queue_.data_in_flight();
  s.control_in_flight = queue_.control_in_flight();
  s.queued_bytes = window_.queued_bytes();
  s.bytes_received = window_.bytes_received();
  s.bytes_published = window_.bytes_published();
  s.credit_stalls = credit_stalls_;
  s.late_bytes = late_bytes_;
  return s;
}

const char* to_string(status value) {
  switch (value) {
    case status::ok:
      return "ok";
    case status::would_block:
      return "would block";
    case status::eof:
      return "end of stream";
    case status::closed:
      return "closed";
    case status::shut_down:
      return "shut down";
    case status::no_mapping:
      return "no mapping at that offset";
    case status::no_space:
      return "no free iomap slot";
    case status::unsupported:
      return "no RDMA READ on this connection";
    case status::incomplete:
      return "a map to be written once was not all written";
    default:
      return "invalid";
  }
}

const char* to_string(completion_status value) {
  switch (value) {
    case completion_status::success:
      return "success";
    case completion_status::flushed:
      return "flushed";
    case completion_status::remote_access:
      return "remote access error";
    case completion_status::rnr_retry_exceeded:
      return "receiver not ready, retries exceeded";
    case completion_status::retry_exceeded:
      return "transport retries exceeded";
    case completion_status::local_error:
      return "local error";
    default:
      return "error";
  }
}

}  // namespace riomesh::engine
