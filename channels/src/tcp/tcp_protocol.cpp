// The tcp protocol's application calls and its outbound queue.
#include <riomesh/channels/tcp/tcp_protocol.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace riomesh::channels::tcp {

tcp_protocol::tcp_protocol(const tcp_params& p, std::string peer)
    : params_(p),
      peer_(std::move(peer)),
      // Gated: a small ring until authorized. The handshake needs little,
      // and a flood of connections that never authenticate costs little.
      ring_(p.gated ? std::min<std::size_t>(p.recv_ring, setup_ring) : p.recv_ring) {
  frame hello;
  hello.kind = frame_kind::hello;
  hello.length = p.max_peer_maps;
  hello.offset = protocol_version;
  hello.extra = hello_magic;
  queue(hello);
}

void tcp_protocol::queue(const frame& f, const unsigned char* payload, bool transient) {
  outgoing o;
  o.header = encode(f);
  o.payload = payload;
  o.payload_length = payload ? f.length : 0;
  o.transient = transient;
  if (transient)
    transient_bytes_ += o.payload_length;
  o.kind = f.kind;
  out_.push_back(std::move(o));
}

void tcp_protocol::queue_more(const unsigned char* payload, std::size_t length) {
  outgoing o;
  o.header_done = header_size;
  o.payload = payload;
  o.payload_length = length;
  o.kind = frame_kind::iowrite;
  out_.push_back(std::move(o));
}

io_result tcp_protocol::send(const void* data, std::size_t length) {
  if (failed() || (closed() && write_open_))
    return {0, status::closed};
  if (!write_open_)
    return {0, status::shut_down};
  auto* bytes = static_cast<const unsigned char*>(data);
  std::size_t accepted = 0;
  // Whatever the socket does not take must fit in our send buffer after the
  // flush, so a frame never promises more than that.
  std::size_t room =
      params_.send_buffer - std::min(params_.send_buffer, owned_bytes_ + transient_bytes_);
  while (accepted < length && room > 0 && out_.size() < params_.max_pending) {
    std::size_t n = std::min({length - accepted, room, std::size_t{params_.max_frame}});
    frame f;
    f.kind = frame_kind::data;
    f.length = static_cast<std::uint32_t>(n);
    queue(f, bytes + accepted, true);
    accepted += n;
    room -= n;
  }
  if (accepted < length) {
    want_writable_ = true;
    return {accepted, status::would_block};
  }
  return {accepted, status::ok};
}

io_result tcp_protocol::send_copy(const void* data, std::size_t length) {
  if (failed() || (closed() && write_open_))
    return {0, status::closed};
  if (!write_open_)
    return {0, status::shut_down};
  auto* bytes = static_cast<const unsigned char*>(data);
  std::size_t accepted = 0;
  std::size_t room =
      params_.send_buffer - std::min(params_.send_buffer, owned_bytes_ + transient_bytes_);
  while (accepted < length && room > 0) {
    outgoing* tail = out_.empty() ? nullptr : &out_.back();
    bool joins = tail && tail->kind == frame_kind::data && !tail->transient &&
                 tail->header_done == 0 && tail->owned.size() < coalesced_frame;
    if (!joins) {
      if (out_.size() >= params_.max_pending)
        break;
      frame f;
      f.kind = frame_kind::data;
      queue(f);
      tail = &out_.back();
      // The spare frame's storage (the largest written one kept), else a
      // small one that joined sends double. Not a whole coalesced_frame
      // each: where frames go between IOWRITEs, a 100-byte envelope each,
      // 64 KiB apiece freed as they were written made glibc give the top
      // of its heap back (madvise) and fault it in again, zeroed, for the
      // next (1 MiB one-way: 10 faults a message).
      if (spare_.capacity() >= std::min(length - accepted, coalesced_frame)) {
        tail->owned.swap(spare_);
        spare_used_ = true;
      } else {
        tail->owned.reserve(std::min(coalesced_frame, std::max(length - accepted, first_frame)));
      }
    }
    std::size_t n = std::min({length - accepted, room, coalesced_frame - tail->owned.size()});
    tail->owned.insert(tail->owned.end(), bytes + accepted, bytes + accepted + n);
    tail->payload = tail->owned.data();
    tail->payload_length = tail->owned.size();
    frame f;
    f.kind = frame_kind::data;
    f.length = static_cast<std::uint32_t>(tail->payload_length);
    tail->header = encode(f);
    owned_bytes_ += n;
    room -= n;
    accepted += n;
  }
  if (accepted < length) {
    want_writable_ = true;
    return {accepted, status::would_block};
  }
  return {accepted, status::ok};
}

void tcp_protocol::detach() {
  for (auto& o : out_) {
    if (!o.transient)
      continue;
    transient_bytes_ -= o.payload_length;
    o.owned.assign(o.payload + o.payload_done, o.payload + o.payload_length);
    owned_bytes_ += o.owned.size();
    o.payload = o.owned.data();
    o.payload_length = o.owned.size();
    o.payload_done = 0;
    o.transient = false;
  }
}

bool tcp_protocol::queue_control(const frame& f) {
  // At most one acknowledgement per map the peer may hold, and some slack:
  // an honest peer reads them as fast as it unmaps.
  std::size_t limit = std::size_t{params_.max_peer_maps} * 2 + 64;
  if (control_queued_ >= limit) {
    close(phase::failed, "peer " + peer_ + ": it does not read: " + std::to_string(limit) +
                             " acknowledgements wait for it");
    return false;
  }
  ++control_queued_;
  queue(f);
  return true;
}

void tcp_protocol::authorize(bool encrypted) {
  if (authorized_)
    return;
  authorized_ = true;
  encryption_agreed_ = encrypted;
  grow_ring();
  if (rstate_ == rstate::secure_wait && !encrypted)
    return protocol_error(current_, "SECURE, and the session agreed on no encryption");
  if (rstate_ != rstate::held)
    return;
  held_.clear();
  rstate_ = rstate::header;
  process_frame(current_);
}

void tcp_protocol::secure_output() {
  if (secure_queued_ || closed())
    return;
  secure_queued_ = true;
  frame f;
  f.kind = frame_kind::secure;
  queue(f);
}

void tcp_protocol::start_secure_input() {
  if (rstate_ != rstate::secure_wait)
    return;
  input_secured_ = true;
  rstate_ = rstate::header;
}

void tcp_protocol::grow_ring() {
  if (ring_.size() >= params_.recv_ring)
    return;
  // Unread bytes keep their order, from the start of the new ring.
  std::vector<unsigned char> bigger(params_.recv_ring);
  std::size_t first = std::min(ring_used_, ring_.size() - ring_head_);
  std::copy_n(ring_.begin() + ring_head_, first, bigger.begin());
  std::copy_n(ring_.begin(), ring_used_ - first, bigger.begin() + first);
  ring_ = std::move(bigger);
  ring_head_ = 0;
}

map_result tcp_protocol::map(void* base, std::size_t length, std::optional<std::uint64_t> offset,
                             bool once) {
  if (closed())
    return {status::closed};
  std::uint64_t at = offset.value_or(reinterpret_cast<std::uint64_t>(base));
  if (length == 0 || at > std::numeric_limits<std::uint64_t>::max() - length)
    return {status::invalid};
  if (withdrawn_.overlaps(at, length))
    return {status::invalid};
  // As many as the peer said it takes (until its HELLO is in, we trust our
  // own bound: an honest peer configured alike says the same).
  auto most = hello_seen_ ? peer_accepts_maps_ : params_.max_peer_maps;
  if (local_maps_.size() >= most)
    return {status::no_space};
  if (!local_maps_.add({at, length, static_cast<unsigned char*>(base), once}))
    return {status::invalid};
  frame f;
  f.kind = frame_kind::iomap;
  f.flags = once ? map_once : 0;
  f.offset = at;
  f.extra = length;
  queue(f);
  return {status::ok, at};
}

status tcp_protocol::unmap(std::uint64_t offset) {
  if (placing_once_ && placing_once_->offset == offset)
    placing_once_ = nullptr;  // before its node goes
  region gone;
  if (!local_maps_.remove(offset, &gone))
    return status::invalid;
  bool filled = gone.once && gone.filled == gone.length;
  if (filled)
    return status::ok;  // the peer let go of it with its last byte
  // Until the peer acknowledges, its iowrites already on the way are read
  // and dropped; the memory itself is the caller's again at once, even
  // for the rest of a payload that was being placed into it.
  if (rstate_ == rstate::place && place_at_ >= gone.base && place_at_ < gone.base + gone.length)
    rstate_ = rstate::discard;
  withdrawn_.add({gone.offset, gone.length, nullptr});
  if (!closed()) {
    frame f;
    f.kind = frame_kind::iounmap;
    f.offset = offset;
    queue(f);
  }
  return gone.once ? status::incomplete : status::ok;
}

io_result tcp_protocol::iowrite(const void* source, std::size_t length, std::uint64_t offset,
                                std::uint64_t token) {
  piece one{source, length};
  return iowrite_pieces(&one, 1, offset, token);
}

io_result tcp_protocol::iowrite_pieces(const piece* pieces, std::size_t count, std::uint64_t offset,
                                       std::uint64_t token) {
  if (failed() || (closed() && write_open_))
    return {0, status::closed};
  if (!write_open_)
    return {0, status::shut_down};
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < count; ++i)
    length += pieces[i].length;
  if (length > std::numeric_limits<std::uint64_t>::max() - offset)
    return {0, status::invalid};
  std::size_t done = 0, index = 0, into = 0;  // the piece and where in it
  status stopped = status::ok;
  while (done < length) {
    std::uint64_t at = offset + done;
    region* m = peer_maps_.holding(at, 1);
    if (!m) {
      stopped = status::no_mapping;
      break;
    }
    if (m->once && at != m->offset + m->filled) {
      stopped = status::invalid;  // written once, in order
      break;
    }
    if (out_.size() >= params_.max_pending) {
      want_writable_ = true;
      stopped = status::would_block;
      break;
    }
    std::size_t n =
        std::min<std::uint64_t>({length - done, m->offset + m->length - at, params_.max_frame});
    frame f;
    f.kind = frame_kind::iowrite;
    f.offset = at;
    f.length = static_cast<std::uint32_t>(n);
    // The frame's payload: the rest of this piece, then the next ones, as
    // far as n goes. A frame's entries may pass max_pending: they leave
    // together.
    for (std::size_t left = n; left > 0;) {
      while (pieces[index].length == into) {
        ++index;
        into = 0;
      }
      auto* bytes = static_cast<const unsigned char*>(pieces[index].data) + into;
      std::size_t k = std::min(left, pieces[index].length - into);
      if (left == n)
        queue(f, bytes, false);
      else
        queue_more(bytes, k);
      // queue() took the frame's whole length as the payload's: only this
      // piece's part is.
      if (left == n)
        out_.back().payload_length = k;
      into += k;
      left -= k;
    }
    done += n;
    // A once map all written ends here, as it does at the peer once the
    // last byte is placed.
    if (m->once && (m->filled += n) == m->length)
      peer_maps_.remove(m->offset);
  }
  if (done > 0) {
    out_.back().reports = true;
    out_.back().token = token;
    out_.back().token_bytes = done;
  }
  return {done, stopped};
}

status tcp_protocol::shutdown(shutdown_how how) {
  if (failed())
    return status::closed;
  if (how != shutdown_how::write) {
    read_open_ = false;
    ring_head_ = ring_used_ = 0;  // unread bytes are dropped
  }
  if (how != shutdown_how::read && write_open_) {
    write_open_ = false;
    if (!closed()) {
      frame f;
      f.kind = frame_kind::shutdown;
      queue(f);
    }
  }
  maybe_done();
  return status::ok;
}

void tcp_protocol::keepalive() {
  if (!closed() && out_.empty())
    queue(frame{});
}

tcp_params tcp_params::from(const config::channel_settings& c) {
  tcp_params p;
  p.recv_ring = c.recv_buffer;
  p.send_buffer = c.send_buffer;
  p.max_pending = c.max_pending;
  p.max_peer_maps = c.iomap_size;
  p.keepalive = c.keepalive;
  p.peer_timeout = c.peer_timeout;
  return p;
}

void tcp_protocol::keep_alive_within(std::chrono::nanoseconds silence) {
  if (silence.count() <= 0)
    return;
  auto need = silence / 3;
  if (params_.keepalive.count() <= 0 || need < params_.keepalive)
    params_.keepalive = need;
}

void tcp_protocol::tick(std::chrono::steady_clock::time_point now) {
  if (closed())
    return;
  if (!ticking_ || bytes_in_ != ticked_in_)
    heard_ = now;
  if (!ticking_ || bytes_out_ != ticked_out_)
    spoke_ = now;
  ticking_ = true;
  ticked_in_ = bytes_in_;
  ticked_out_ = bytes_out_;
  if (!spare_used_)
    std::vector<unsigned char>().swap(spare_);
  spare_used_ = false;
  if (params_.peer_timeout.count() > 0 && now - heard_ > params_.peer_timeout) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - heard_).count();
    close(phase::failed, "peer " + peer_ + " silent for " + std::to_string(ms) + " ms");
    return;
  }
  if (params_.keepalive.count() > 0 && now - spoke_ >= params_.keepalive) {
    keepalive();
    spoke_ = now;
  }
}

std::size_t tcp_protocol::write_iov(iovec* iov, std::size_t max) const {
  std::size_t n = 0;
  bool past_secure = false;
  for (const auto& o : out_) {
    if (n == max || past_secure)
      break;
    past_secure = o.kind == frame_kind::secure && !output_secured_;
    if (o.header_done < header_size)
      iov[n++] = {const_cast<unsigned char*>(o.header.data() + o.header_done),
                  header_size - o.header_done};
    if (n == max)
      break;
    if (o.payload_done < o.payload_length)
      iov[n++] = {const_cast<unsigned char*>(o.payload + o.payload_done),
                  o.payload_length - o.payload_done};
  }
  return n;
}

void tcp_protocol::on_written(std::size_t n) {
  bytes_out_ += n;
  while (n > 0 && !out_.empty()) {
    auto& o = out_.front();
    std::size_t h = std::min(n, header_size - o.header_done);
    o.header_done += h;
    n -= h;
    std::size_t p = std::min(n, o.payload_length - o.payload_done);
    o.payload_done += p;
    n -= p;
    if (o.header_done < header_size || o.payload_done < o.payload_length)
      break;
    owned_bytes_ -= std::min(owned_bytes_, o.owned.size());
    if (o.kind == frame_kind::data && o.owned.capacity() > spare_.capacity()) {
      o.owned.clear();
      spare_.swap(o.owned);
    }
    if (o.transient)
      transient_bytes_ -= o.payload_length;
    if (o.reports)
      emit({event_kind::iowrite_done, o.token, o.token_bytes, 0});
    if (o.kind == frame_kind::shutdown)
      shutdown_sent_ = true;
    if (o.kind == frame_kind::iounmap_ack)
      --control_queued_;
    if (o.kind == frame_kind::secure) {
      output_secured_ = true;
      out_.pop_front();
      break;  // what follows is the shell's to encrypt, not to write
    }
    out_.pop_front();
  }
  if (want_writable_ && owned_bytes_ < params_.send_buffer && out_.size() < params_.max_pending &&
      !closed()) {
    want_writable_ = false;
    emit({event_kind::writable});
  }
  maybe_done();
}

bool tcp_protocol::take_events(std::vector<event>& out) {
  if (events_.empty())
    return false;
  out.insert(out.end(), events_.begin(), events_.end());
  events_.clear();
  return true;
}

void tcp_protocol::close(phase to, const std::string& why) {
  if (closed())
    return;
  phase_ = to;
  reason_ = why;
  if (to == phase::failed)
    out_.clear();  // nothing more goes to a peer we gave up on
  emit({event_kind::closed});
}

// Both directions shut and our SHUTDOWN on the wire: a clean end.
void tcp_protocol::maybe_done() {
  if (!closed() && !write_open_ && shutdown_sent_ && peer_shut_)
    close(phase::done, "shut down");
}

}  // namespace riomesh::channels::tcp
