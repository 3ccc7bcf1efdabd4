// The tcp protocol's receiving side: frame headers checked before their
// payload is read, and payloads steered into the ring or a mapped region.
#include <riomesh/channels/tcp/tcp_protocol.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace riomesh::channels::tcp {

std::pair<unsigned char*, std::size_t> tcp_protocol::read_target() {
  offered_ahead_ = false;
  if (ahead_at_ < ahead_end_)
    return {nullptr, 0};  // what was read ahead goes first (read_targets)
  return next_target();
}

std::pair<unsigned char*, std::size_t> tcp_protocol::next_target() {
  if (failed())
    return {nullptr, 0};
  switch (rstate_) {
    case rstate::header:
      return {header_ + header_got_, header_size - header_got_};
    case rstate::data: {
      // Stream bytes go into the ring's free space; none free: stop reading,
      // and the peer's socket fills up (backpressure).
      std::size_t tail = (ring_head_ + ring_used_) % ring_.size();
      std::size_t free = ring_.size() - ring_used_;
      std::size_t run = std::min({free, ring_.size() - tail, payload_left_});
      return {ring_.data() + tail, run};
    }
    case rstate::place:
      return {place_at_, payload_left_};
    case rstate::held:
      return {nullptr, 0};  // until authorize()
    case rstate::secure_wait:
      return {nullptr, 0};  // until the shell decrypts
    default:
      if (scratch_.empty())
        scratch_.resize(64 * 1024);  // only a peer writing into a withdrawn map needs it
      return {scratch_.data(), std::min(scratch_.size(), payload_left_)};
  }
}

bool tcp_protocol::takes_bytes() const {
  if (failed())
    return false;
  switch (rstate_) {
    case rstate::held:
    case rstate::secure_wait:
      return false;
    case rstate::data:
      return ring_used_ < ring_.size();
    default:
      return true;
  }
}

std::size_t tcp_protocol::read_targets(iovec* iov) {
  offered_ahead_ = false;
  if (ahead_at_ < ahead_end_) {
    drain_ahead();
    if (ahead_at_ < ahead_end_)
      return 0;  // the ring is full: the socket keeps the rest
  }
  auto [at, room] = next_target();
  if (room == 0)
    return 0;
  bool ahead = reads_ahead() && (rstate_ == rstate::header || room == payload_left_);
  if (ahead) {
    if (ahead_.empty())
      ahead_.resize(read_ahead_size);
    offered_ahead_ = true;
  }
  if (rstate_ == rstate::header) {
    if (!ahead) {
      iov[0] = {at, room};
      return 1;
    }
    direct_room_ = 0;  // the header too: it is parsed from ahead_
    iov[0] = {ahead_.data(), ahead_.size()};
    return 1;
  }
  iov[0] = {at, room};
  // Only after the whole rest of a payload: never a byte into a wrong place.
  if (room != payload_left_)
    return 1;
  direct_room_ = room;
  iov[1] = ahead ? iovec{ahead_.data(), ahead_.size()} : iovec{header_, header_size};
  return 2;
}

void tcp_protocol::on_read(std::size_t n) {
  if (n == 0 || failed())
    return;
  bytes_in_ += n;
  if (!offered_ahead_)
    return take(n);
  offered_ahead_ = false;
  std::size_t direct = std::min(n, direct_room_);
  if (direct > 0)
    take(direct);
  ahead_at_ = 0;
  ahead_end_ = n - direct;
  drain_ahead();
}

void tcp_protocol::drain_ahead() {
  while (ahead_at_ < ahead_end_ && !failed()) {
    auto [at, room] = next_target();
    if (room == 0)
      break;
    std::size_t k = std::min(room, ahead_end_ - ahead_at_);
    std::memcpy(at, ahead_.data() + ahead_at_, k);
    ahead_at_ += k;
    take(k);
  }
  if (ahead_at_ == ahead_end_ || failed())
    ahead_at_ = ahead_end_ = 0;
}

void tcp_protocol::take(std::size_t n) {
  if (rstate_ != rstate::header && n > payload_left_) {
    std::size_t rest = n - payload_left_;  // bytes of the next header, already in place
    take(payload_left_);
    if (failed())
      return;
    header_got_ = rest;
    if (header_got_ == header_size)
      process_header();
    return;
  }
  switch (rstate_) {
    case rstate::header:
      header_got_ += n;
      if (header_got_ == header_size)
        process_header();
      return;
    case rstate::data:
      if (read_open_) {
        bool was_empty = ring_used_ == 0;
        ring_used_ += n;
        if (was_empty)
          emit({event_kind::readable});
      }
      break;
    case rstate::place:
      place_at_ += n;
      break;
    default:
      discarded_ += n;
      break;
  }
  payload_left_ -= n;
  if (payload_left_ == 0)
    finish_payload();
}

void tcp_protocol::finish_payload() {
  if (rstate_ == rstate::place && placing_once_)
    placing_once_->filled += current_.length;
  placing_once_ = nullptr;
  rstate_ = rstate::header;
  header_got_ = 0;
}

void tcp_protocol::protocol_error(const frame& f, const std::string& what) {
  close(phase::failed, "peer " + peer_ + ": frame " + std::to_string(frames_in_) + " (" +
                           describe(f) + "): " + what);
}

void tcp_protocol::on_hello(const frame& f) {
  if (f.kind != frame_kind::hello || f.extra != hello_magic)
    return protocol_error(f, "not a riomesh tcp peer (no HELLO)");
  if (f.offset != protocol_version)
    return protocol_error(f, "protocol version " + std::to_string(f.offset) + "; only version " +
                                 std::to_string(protocol_version) + " is spoken");
  if (f.flags != 0 || f.reserved != 0)
    return protocol_error(f, "flags or reserved bits set");
  // A HELLO's length is the number of maps its sender accepts from us.
  if (f.length > max_maps)
    return protocol_error(f, "accepts " + std::to_string(f.length) + " maps, more than the " +
                                 std::to_string(max_maps) + " the protocol allows");
  peer_accepts_maps_ = f.length;
  hello_seen_ = true;
}

void tcp_protocol::process_header() {
  ++frames_in_;
  frame f = decode(header_);
  current_ = f;
  header_got_ = 0;
  if (!hello_seen_)
    return on_hello(f);
  std::uint8_t allowed = f.kind == frame_kind::iomap ? map_once : 0;
  if ((f.flags & ~allowed) != 0 || f.reserved != 0)
    return protocol_error(f, "flags or reserved bits set");
  bool placement = f.kind == frame_kind::iowrite || f.kind == frame_kind::iomap ||
                   f.kind == frame_kind::iounmap || f.kind == frame_kind::iounmap_ack;
  if (placement && params_.gated && !authorized_) {
    // Held, not judged: an honest peer's handshake bytes are all in the
    // ring before its first map, and the session decides what this means.
    rstate_ = rstate::held;
    held_ = "frame " + std::to_string(frames_in_) + " (" + describe(f) +
            ") came before the session was authenticated";
    return;
  }
  process_frame(f);
}

void tcp_protocol::process_frame(const frame& f) {
  bool has_payload = f.kind == frame_kind::data || f.kind == frame_kind::iowrite;
  if (!has_payload && f.length != 0)
    return protocol_error(f, "this kind carries no payload");
  switch (f.kind) {
    case frame_kind::data:
    case frame_kind::iowrite: {
      if (peer_shut_)
        return protocol_error(f, "payload after the peer's SHUTDOWN");
      if (f.length == 0)
        return protocol_error(f, "empty payload");
      if (f.length > params_.max_frame)
        return protocol_error(
            f, "payload longer than the " + std::to_string(params_.max_frame) + "-byte limit");
      payload_left_ = f.length;
      if (f.kind == frame_kind::data) {
        rstate_ = rstate::data;
        return;
      }
      if (f.length > std::numeric_limits<std::uint64_t>::max() - f.offset)
        return protocol_error(f, "placement wraps past the end of the address space");
      if (region* m = local_maps_.holding(f.offset, f.length)) {
        if (m->once && f.offset != m->offset + m->filled)
          return protocol_error(f, "a map to be written once, written at offset " +
                                       std::to_string(f.offset - m->offset) + " after " +
                                       std::to_string(m->filled) + " bytes");
        place_at_ = m->base + (f.offset - m->offset);
        placing_once_ = m->once ? m : nullptr;
        rstate_ = rstate::place;
        return;
      }
      if (withdrawn_.holding(f.offset, f.length)) {
        rstate_ = rstate::discard;  // sent before the peer saw our IOUNMAP
        return;
      }
      return protocol_error(f, "placement outside every mapped region");
    }
    case frame_kind::iomap:
      if (f.extra == 0 || f.extra > std::numeric_limits<std::uint64_t>::max() - f.offset)
        return protocol_error(f, "map of length " + std::to_string(f.extra) + " at that offset");
      if (peer_maps_.size() >= params_.max_peer_maps)
        return protocol_error(f, "more than the " + std::to_string(params_.max_peer_maps) +
                                     " maps this node accepts (channel.iomap_size)");
      if (!peer_maps_.add({f.offset, f.extra, nullptr, (f.flags & map_once) != 0}))
        return protocol_error(f, "map overlaps an earlier one");
      emit({event_kind::peer_iomap, f.offset, f.extra, 0});
      return;
    case frame_kind::iounmap: {
      if (!peer_maps_.remove(f.offset))
        return protocol_error(f, "unmap of a map never announced");
      emit({event_kind::peer_iounmap, f.offset, 0, 0});
      frame ack;
      ack.kind = frame_kind::iounmap_ack;
      ack.offset = f.offset;
      queue_control(ack);  // after every IOWRITE we queued for it
      return;
    }
    case frame_kind::iounmap_ack:
      if (!withdrawn_.remove(f.offset))
        return protocol_error(f, "acknowledges an unmap never sent");
      return;
    case frame_kind::shutdown:
      peer_shut_ = true;
      emit({event_kind::readable});
      maybe_done();
      return;
    case frame_kind::keepalive:
      return;
    case frame_kind::secure:
      if (input_secured_)
        return protocol_error(f, "a second SECURE");
      if (authorized_ && !encryption_agreed_)
        return protocol_error(f, "SECURE, and the session agreed on no encryption");
      rstate_ = rstate::secure_wait;
      return;
    case frame_kind::hello:
      return protocol_error(f, "a second HELLO");
    default:
      return protocol_error(f, "unknown frame kind");
  }
}

void tcp_protocol::on_eof() {
  if (closed())
    return;
  if (rstate_ == rstate::held) {
    close(phase::failed, "peer " + peer_ + ": " + held_ + ", and then the stream ended");
    return;
  }
  if (rstate_ == rstate::secure_wait) {
    close(phase::failed, "peer " + peer_ + ": the stream ended after its SECURE");
    return;
  }
  if (rstate_ != rstate::header || header_got_ > 0) {
    std::size_t expected = rstate_ == rstate::header ? header_size : current_.length;
    std::size_t got = rstate_ == rstate::header ? header_got_ : current_.length - payload_left_;
    if (rstate_ == rstate::header)
      ++frames_in_;
    close(phase::failed, "peer " + peer_ + ": frame " + std::to_string(frames_in_) +
                             " truncated by end of stream (" + std::to_string(got) + " of " +
                             std::to_string(expected) +
                             (rstate_ == rstate::header ? " header" : " payload") + " bytes)");
    return;
  }
  if (!peer_shut_) {
    close(phase::failed, "peer " + peer_ + " closed the connection without shutting down");
    return;
  }
  maybe_done();
}

void tcp_protocol::fail(const std::string& why) {
  close(phase::failed, why);
}

io_result tcp_protocol::recv(void* out, std::size_t length) {
  if (!read_open_)
    return {0, status::shut_down};
  if (ring_used_ == 0) {
    if (failed())
      return {0, status::closed};
    if (peer_shut_ || closed())
      return {0, status::eof};
    return {0, status::would_block};
  }
  auto* dst = static_cast<unsigned char*>(out);
  std::size_t copied = 0;
  while (copied < length && ring_used_ > 0) {
    auto [p, n] = peek();
    n = std::min(n, length - copied);
    std::memcpy(dst + copied, p, n);
    consume(n);
    copied += n;
  }
  return {copied, status::ok};
}

std::pair<const unsigned char*, std::size_t> tcp_protocol::peek() const {
  if (ring_used_ == 0 || !read_open_)
    return {nullptr, 0};
  return {ring_.data() + ring_head_, std::min(ring_used_, ring_.size() - ring_head_)};
}

void tcp_protocol::consume(std::size_t n) {
  n = std::min(n, ring_used_);
  ring_head_ = (ring_head_ + n) % ring_.size();
  ring_used_ -= n;
  if (ring_used_ == 0)
    ring_head_ = 0;  // keeps the next payload read contiguous
  if (ahead_at_ < ahead_end_)
    drain_ahead();  // room again for what was read ahead
}

}  // namespace riomesh::channels::tcp
