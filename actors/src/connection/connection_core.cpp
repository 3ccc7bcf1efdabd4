#include <riomesh/actors/connection/buffer_stream.hpp>
#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/connection/send_registrations.hpp>
#include "core_released.hpp"

#include <algorithm>
#include <cstring>

namespace riomesh::actors {

connection_core::connection_core(channels::iomap_access& io, unsigned char* arena,
                                 const settings& s, std::function<void()> wake)
    : io_(io),
      arena_(arena),
      settings_(s),
      peer_arena_(s.peer_arena_first ? s.peer_arena_first : s.peer_arena_size),
      decoder_([&] {
        // Segments of an arena sized by demand lie anywhere below the
        // application's maps; the core checks each buffer against them.
        auto l = s.inbound;
        if (s.arena_cap)
          l.arena_size = arena_span;
        l.peer_arena_size = s.peer_arena_first ? arena_span : s.peer_arena_size;
        return l;
      }()),
      batch_(s.releases),
      released_(std::make_shared<released>()),
      regs_(std::make_unique<send_registrations>(io)),
      fetches_(std::make_unique<fetch_flights>(io, *regs_)),
      lent_(s.max_loans),
      fetch_order_(s.fetches) {
  released_->wake = std::move(wake);
  std::string why;
  // Without registration (tcp) device memory is read and written through
  // its CPU mapping, as any other.
  auto* reg = io_.registration();
  stage_device_out_ = reg && !reg->maps_dmabuf(why);
  if (elastic()) {
    if (!settings_.budget)
      settings_.budget = std::make_shared<unbounded_budget>();
    arena_sizing::limits l;
    l.first = s.inbound.arena_size;
    l.cap = std::max(s.arena_cap, s.inbound.arena_size);
    l.period = s.sizing_period;
    sizing_.emplace(l);
    std::string error;
    auto first = make_segment(s.inbound.arena_size, 0, error);
    if (!first.data) {
      fail("no receive arena: " + error);
      return;
    }
    arena_ = first.data;
    own_.add(std::move(first));
  } else {
    own_.add({0, s.inbound.arena_size, arena, s.arena_owner, s.arena_fd});
  }
  if (s.inbound.arena_size > 0) {
    auto m = s.arena_dmabuf && !s.staged_to && reg
                 ? reg->map_dmabuf(arena_, s.inbound.arena_size, s.arena_fd, 0)
                 : io_.map(arena_, s.inbound.arena_size, 0);
    // A channel the peer broke in the very read that finished the session
    // (a lie right after its hello) says why: its driver gives that reason
    // (on_closed), not this one.
    if (m.st == channels::status::closed)
      channel_lost_ = true;
    else if (m.st != channels::status::ok)
      fail("cannot map the arena for the peer");
  }
}

connection_core::~connection_core() {
  {
    std::lock_guard<std::mutex> guard(released_->lock);
    released_->open = false;
  }
  // Writes still posted when the connection ended never complete: their
  // pins go with the core, or the node's send cache would keep those
  // registrations, and the memory they hold, for the life of the node
  // (seen after a link cut: a lost peer's whole arena stayed pinned).
  for (const auto& [token, id] : leases_)
    regs_->unpin(id);
  for (const auto& [token, ids] : piece_leases_)
    for (auto id : ids)
      regs_->unpin(id);
}

void connection_core::fail(const std::string& why) {
  if (!reason_.empty())
    return;
  reason_ = settings_.peer.empty() ? why : "peer " + settings_.peer + ": " + why;
  shutdown_due_ = true;
}

void connection_core::on_closed(const std::string& why) {
  if (reason_.empty())
    reason_ = why.empty() ? lost_reason() : why;
}

const std::string& connection_core::lost_reason() {
  static const std::string closed = "the connection closed";
  return closed;
}

connection_core::submit_status connection_core::submit(outbound_message&& m) {
  if (closed())
    return submit_status::closed;
  bool carries = m.env.kind == envelope_kind::message || m.env.kind == envelope_kind::request ||
                 m.env.kind == envelope_kind::response;
  if (m.env.body.size() > settings_.peer_max_body && carries && m.env.flags == 0 &&
      m.placed.size() < settings_.peer_max_buffers) {
    // Too large to go inline: the body goes as the last placed buffer,
    // into the peer's arena (in pieces if larger), and is read from there.
    auto body = std::make_shared<std::vector<unsigned char>>(std::move(m.env.body));
    m.env.body.clear();
    m.placed.push_back(buffer::adopt(body->data(), body->size(), buffer::origin::copy, [body] {}));
    m.env.flags |= envelope::body_placed;
  }
  if (m.env.body.size() > settings_.peer_max_body || m.placed.size() > settings_.peer_max_buffers)
    return submit_status::too_large;
  std::uint64_t streamed = 0, lent = 0;
  std::uint32_t streams = 0;
  for (const auto& b : m.placed)
    if (lends(m, b)) {
      lent += b.size();
    } else if (b.size() > settings_.peer_arena_size) {
      streamed += b.size();
      ++streams;
    }
  // What the peer fetches of one message is bounded as what it assembles.
  auto most = std::min(settings_.max_streamed, settings_.peer_max_streamed);
  if (streamed > most || lent > most ||
      streams > std::min(settings_.max_streams, settings_.peer_max_streams))
    return submit_status::too_large;
  if (queue_.size() >= settings_.max_pending)
    return submit_status::congested;
  stage_device_memory(m);
  if (streams == 0) {
    queue_.push_back(std::move(m));
    return submit_status::queued;
  }
  // Pieces of a quarter arena: others' buffers still fit beside them.
  auto piece = std::max<std::uint64_t>(settings_.peer_arena_size / 4 / 4096 * 4096, 4096);
  for (auto& part : split_for_arena(std::move(m), settings_.peer_arena_size, piece))
    queue_.push_back(std::move(part));
  return submit_status::queued;
}

void connection_core::on_event(const channels::event& e) {
  if (e.kind == channels::event_kind::iowrite_done) {
    in_flight_.erase(e.token);
    if (auto l = leases_.find(e.token); l != leases_.end()) {
      regs_->unpin(l->second);
      leases_.erase(l);
    } else if (auto p = piece_leases_.find(e.token); p != piece_leases_.end()) {
      for (auto id : p->second)
        regs_->unpin(id);
      piece_leases_.erase(p);
    }
  } else if (e.kind == channels::event_kind::peer_iomap) {
    peer_mapped_ = true;
  } else {
    fetches_->complete(e);
  }
}

bool connection_core::pump(clock::time_point now) {
  if (closed())
    return false;
  bool moved = start_fetches();
  moved = report_releases(now) || moved;
  now_ = now;
  if (sizing_ && !farewell_out_)
    moved = size_arena(now) || moved;
  return moved;
}

bool connection_core::send_next_message() {
  return !closed() && out_bytes_.empty() && send_next();
}

void connection_core::sent(std::size_t n) {
  out_pos_ += n;
  if (out_pos_ >= out_bytes_.size()) {
    out_bytes_.clear();
    out_pos_ = 0;
  }
}

void connection_core::send_failed(channels::status st) {
  fail(std::string{"send: "} + engine::to_string(st));
}

// Device memory the fabric cannot send from (a dma-buf the RDMA device
// does not register, whose CPU mapping it cannot pin either) goes from a
// host copy, made once per buffer and counted.
void connection_core::stage_device_memory(outbound_message& m) {
  if (!stage_device_out_)
    return;
  auto staged = [&](buffer& b) {
    const auto* home = b.home_block();
    if (!home || !home->device)
      return;
    auto copy = buffer::heap(b.size());
    std::memcpy(copy.data(), b.data(), b.size());
    stats_.staged_bytes_out += b.size();
    b = std::move(copy);
  };
  auto staged_pieces = [&](buffer& b) {
    if (!b.gathered())
      return staged(b);
    auto pieces = b.pieces();
    for (auto& p : pieces)
      staged(p);
    b = buffer::gather(std::move(pieces));
  };
  for (auto& b : m.placed)
    staged_pieces(b);
  for (auto& w : m.writes)
    staged_pieces(w.data);
}

// Moves the head of the queue on: arena space for its buffers (or a
// stall), their iowrites (resumed where the channel stopped taking), then
// its envelope. True once the envelope is encoded.
channels::io_result connection_core::write_from(const buffer& b, std::size_t done,
                                                std::uint64_t offset) {
  if (b.gathered())
    return write_pieces(b, done, offset);
  auto token = next_token_++;
  auto lease = regs_->pin(b);
  auto r = io_.iowrite(b.data() + done, b.size() - done, offset, token);
  if (r.bytes > 0) {
    in_flight_[token] = b;  // the source stays alive until its iowrite_done
    if (lease)
      leases_[token] = *lease;
  } else if (lease) {
    regs_->unpin(*lease);
  }
  return r;
}

// A gathered buffer's pieces from `done` on, in one call: on tcp one frame
// per map, on rdma pieces sharing work requests, each registered (pinned
// here); one completion to track.
channels::io_result connection_core::write_pieces(const buffer& b, std::size_t done,
                                                  std::uint64_t offset) {
  pieces_.clear();
  std::vector<std::uint64_t> leases;
  for (const auto& p : b.pieces()) {
    if (done >= p.size()) {
      done -= p.size();
      continue;
    }
    if (io_.registration())
      if (auto lease = regs_->pin(p))
        leases.push_back(*lease);
    pieces_.push_back({p.data() + done, p.size() - done});
    done = 0;
  }
  auto token = next_token_++;
  auto r = io_.iowrite_pieces(pieces_.data(), pieces_.size(), offset, token);
  if (r.bytes > 0) {
    in_flight_[token] = b;  // every piece stays alive until its iowrite_done
    if (!leases.empty())
      piece_leases_[token] = std::move(leases);
  } else {
    for (auto id : leases)
      regs_->unpin(id);
  }
  return r;
}

connection_core::write_state connection_core::write_direct(outbound_message& m) {
  while (write_index_ < m.writes.size()) {
    const auto& w = m.writes[write_index_];
    auto r = write_from(w.data, write_done_, w.offset + write_done_);
    if (r.bytes > 0) {
      write_done_ += r.bytes;
      stats_.direct_bytes_out += r.bytes;
    }
    if (write_done_ == w.data.size()) {
      ++write_index_;
      write_done_ = 0;
      continue;
    }
    if (r.bytes > 0 && r.st == channels::status::ok)
      continue;  // a piece of a gathered buffer went: its next one
    if (r.st == channels::status::no_mapping) {
      drop_head("no mapping at the peer for " + std::to_string(w.data.size()) +
                " bytes at offset " + std::to_string(w.offset + write_done_));
      return write_state::dropped;
    }
    if (r.st != channels::status::would_block && r.st != channels::status::ok)
      fail(std::string{"write into the peer's map: "} + engine::to_string(r.st));
    return write_state::waiting;
  }
  return write_state::done;
}

// The head cannot go: its sender hears why, the rest of the queue moves on.
// Bytes of it already written stay where they landed (rsockets' riowrite
// gives no more than that either).
void connection_core::drop_head(const std::string& why, send_failure f) {
  auto m = std::move(queue_.front());
  queue_.pop_front();
  write_index_ = write_done_ = 0;
  head_fetched_ = false;
  ++stats_.dropped;
  if (m.on_failure)
    m.on_failure(f, why);
}

bool connection_core::send_next() {
  // Everything placed in the segment the peer moved us from is announced:
  // tell it so, before anything of the next message.
  if (left_due_ && !head_allocated_) {
    send_step({arena_step::kind::left, *left_due_, 0});
    left_due_.reset();
    return true;
  }
  if (queue_.empty())
    return false;
  auto& m = queue_.front();
  if (!m.writes.empty()) {
    auto w = write_direct(m);
    if (w != write_state::done)
      return w == write_state::dropped;
  }
  if (m.fetch && !head_fetched_) {
    std::string why;
    auto st = fetches_->start(*m.fetch, why);
    if (st == fetch_flights::state::waiting)
      return false;
    if (st != fetch_flights::state::posted) {
      drop_head(why, st == fetch_flights::state::unmapped   ? send_failure::not_mapped
                     : st == fetch_flights::state::past_map ? send_failure::past_map
                                                            : send_failure::misfit);
      return true;
    }
    head_fetched_ = true;
  }
  if (!m.has_envelope) {
    queue_.pop_front();
    write_index_ = write_done_ = 0;
    head_fetched_ = false;
    return true;
  }
  if (!m.placed.empty() && !head_allocated_) {
    if (!peer_mapped_)
      return false;
    std::vector<arena_ref> refs;
    // Waits for arena space or a loan: gives back what this message took.
    auto undo = [&] {
      for (const auto& r : refs)
        if (r.offset >= wire_envelope::lent_from)
          take_back_loan(r.offset);
        else
          peer_arena_.release(r.offset, arena_allocator::round_up(r.length));
      if (!stalled_)
        ++stats_.credit_stalls;
      stalled_ = true;
    };
    bool lent = false;
    for (const auto& b : m.placed) {
      if (lends(m, b)) {
        auto at = lent_.full() ? std::nullopt : lend(b);
        if (!at && lent_.size() > 0) {
          undo();
          return false;  // the peer's fetches give loans back
        }
        if (!at) {  // 2^60 bytes lent over the connection's life
          undo();
          fail("no offsets left to lend a buffer of " + std::to_string(b.size()) + " bytes");
          return false;
        }
        refs.push_back({*at, b.size()});
        lent = true;
        continue;
      }
      auto at = peer_arena_.allocate(b.size());
      if (!at) {
        undo();
        return on_no_space(m);
      }
      refs.push_back({*at, b.size()});
    }
    stalled_ = false;
    if (lent)
      m.env.flags |= envelope::lent;
    m.env.buffers = std::move(refs);
    head_allocated_ = true;
    place_index_ = place_done_ = 0;
  }
  while (place_index_ < m.placed.size()) {
    if (m.env.buffers[place_index_].offset >= wire_envelope::lent_from) {
      ++place_index_;  // lent: it stays here for the peer to fetch
      continue;
    }
    const auto& b = m.placed[place_index_];
    auto r = write_from(b, place_done_, m.env.buffers[place_index_].offset + place_done_);
    if (r.bytes > 0) {
      place_done_ += r.bytes;
      stats_.bytes_placed_out += r.bytes;
    }
    if (place_done_ == b.size()) {
      ++place_index_;
      place_done_ = 0;
      continue;
    }
    if (r.bytes > 0 && r.st == channels::status::ok)
      continue;  // a piece of a gathered buffer went: its next one
    if (r.st != channels::status::would_block && r.st != channels::status::ok)
      fail(std::string{"iowrite into the peer's arena: "} + engine::to_string(r.st));
    return false;  // resumed at the next send_next_message
  }
  encode(m.env, out_bytes_);
  stats_.inline_bytes_out += m.env.body.size();
  ++stats_.messages_out;
  queue_.pop_front();
  head_allocated_ = false;
  head_fetched_ = false;
  write_index_ = write_done_ = 0;
  place_index_ = place_done_ = 0;
  return true;
}

std::size_t connection_core::on_bytes(const unsigned char* p, std::size_t n) {
  std::size_t taken = 0;
  while (taken < n && reason_.empty()) {
    std::size_t used = decoder_.feed(p + taken, n - taken);
    taken += used;
    if (decoder_.failed()) {
      fail(decoder_.error());
      break;
    }
    if (auto e = decoder_.next())
      deliver(std::move(*e));
    else if (used == 0)
      break;
  }
  return taken;
}

void connection_core::on_end() {
  if (closed())
    return;
  // A killed process's socket ends its stream too: only the farewell says
  // it stopped.
  peer_stopped_ = farewell_in_;
  fail(farewell_in_ ? "it stopped (said farewell, then shut the connection down)"
                    : "the connection ended without a farewell (the peer was killed, "
                      "crashed, or gave up draining)");
}

void connection_core::deliver(envelope&& e) {
  if (farewell_in_)
    return fail("envelope " + std::to_string(decoder_.decoded()) + " (" + to_string(e.kind) +
                ") after the peer's farewell");
  if (e.kind == envelope_kind::farewell) {
    farewell_in_ = true;
    return;
  }
  if (e.kind == envelope_kind::arena)
    return on_step(e);
  if (e.kind == envelope_kind::release) {
    for (const auto& r : e.buffers)
      if (!peer_arena_.release(r.offset, r.length)) {
        fail("envelope " + std::to_string(decoder_.decoded()) + ": release of arena space " +
             std::to_string(r.offset) + "+" + std::to_string(r.length) + " never given");
        return;
      }
    ++stats_.releases_in;
    return;
  }
  if (!streams_)
    streams_ = std::make_unique<stream_assembly>(
        stream_assembly::limits{settings_.max_streamed, settings_.max_streams});
  inbound_message m;
  auto shared = released_;
  std::vector<std::size_t> lent;
  std::uint64_t lent_bytes = 0;
  for (const auto& r : e.buffers) {
    if ((e.flags & envelope::lent) && r.offset >= wire_envelope::lent_from) {
      // Fetching costs this node the memory: bounded before it is taken.
      lent_bytes += r.length;
      if (lent_bytes > settings_.max_streamed)
        return fail("envelope " + std::to_string(decoder_.decoded()) + ": lent buffers of " +
                    std::to_string(lent_bytes) + " bytes or more, beyond the " +
                    std::to_string(settings_.max_streamed) +
                    " this node takes of one message (channel.max_streamed)");
      lent.push_back(m.placed.size());
      m.placed.emplace_back();  // fetched later (fetch_order.hpp)
      continue;
    }
    const auto* seg = own_.holding(r.offset, r.length);
    if (!seg)
      return fail("envelope " + std::to_string(decoder_.decoded()) + ": buffer (offset " +
                  std::to_string(r.offset) + ", length " + std::to_string(r.length) +
                  "): outside the arena's segments (the current one: " +
                  std::to_string(own_.current()->size) + " bytes at offset " +
                  std::to_string(own_.current()->offset) + ")");
    auto at = r.offset - seg->offset;
    // Where views of the arena point: the device's memory when staged.
    unsigned char* home = settings_.staged_to ? settings_.staged_to : seg->data;
    const auto& owner = seg->owner;
    // The peer's space is whole allocations: give back what it took.
    arena_range range{r.offset, arena_allocator::round_up(r.length)};
    if (settings_.staged_to) {
      std::memcpy(home + at, arena_ + at, r.length);
      stats_.staged_bytes_in += r.length;
    }
    if (sizing_ && own_.in_current(r.offset)) {
      current_in_use_ += range.length;
      sizing_->used(current_in_use_);
    }
    m.placed.push_back(buffer::adopt(
        home + at, r.length, buffer::origin::arena,
        [shared, owner, range] {
          std::function<void()> wake;
          {
            std::lock_guard<std::mutex> guard(shared->lock);
            if (!shared->open)
              return;
            shared->ranges.push_back(range);
            if (shared->ranges.size() == 1) {
              shared->any.store(true, std::memory_order_release);
              wake = shared->wake;
            }
          }
          if (wake)
            wake();
        },
        // Sent on from here, the arena registers once, as a pool slab does.
        owner ? buffer::home{home, seg->size, owner, seg->fd, settings_.arena_dmabuf}
              : buffer::home{}));
    stats_.bytes_placed_in += r.length;
  }
  std::string error;
  auto where = [&] { return "envelope " + std::to_string(decoder_.decoded()) + ": "; };
  if (e.kind == envelope_kind::piece) {
    // Copied out at once; the view drops here and its space goes back.
    if (!streams_->add_piece(e, m.placed[0], error))
      fail(where() + error);
    return;
  }
  if (!streams_->idle() && !streams_->complete(e, m.placed, error))
    return fail(where() + error);
  stats_.inline_bytes_in += e.body.size();
  ++stats_.messages_in;
  m.env = std::move(e);
  hold_or_pass(std::move(m), lent);
}

void connection_core::fail_queued(send_failure f, const std::string& why) {
  while (!queue_.empty()) {
    auto m = std::move(queue_.front());
    queue_.pop_front();
    if (m.on_failure)
      m.on_failure(f, why);
  }
  head_allocated_ = head_fetched_ = false;
  write_index_ = write_done_ = place_index_ = place_done_ = 0;
}

void connection_core::say_farewell() {
  if (farewell_out_ || closed())
    return;
  farewell_out_ = true;
  envelope bye;
  bye.kind = envelope_kind::farewell;
  encode(bye, out_bytes_);
}

bool connection_core::report_releases(clock::time_point now) {
  if (farewell_out_) {  // the peer no longer listens: nothing goes after the farewell
    if (released_->any.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> guard(released_->lock);
      released_->any.store(false, std::memory_order_relaxed);
      released_->ranges.clear();
    }
    return false;
  }
  if (released_->any.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> guard(released_->lock);
    released_->any.store(false, std::memory_order_relaxed);
    for (const auto& r : released_->ranges) {
      arena_released_ += r.length;
      if (sizing_ && own_.in_current(r.offset))
        current_in_use_ -= std::min(current_in_use_, r.length);
      batch_.add(r, now);
    }
    released_->ranges.clear();
  }
  if (batch_.empty() || !batch_.due(now) || !out_bytes_.empty())
    return false;
  // One envelope holds at most the peer's max_buffers ranges.
  envelope rel;
  rel.kind = envelope_kind::release;
  auto emit = [&] {
    encode(rel, out_bytes_);
    ++stats_.releases_out;
    rel.buffers.clear();
  };
  for (const auto& r : batch_.take()) {
    rel.buffers.push_back({r.offset, r.length});
    if (rel.buffers.size() == settings_.peer_max_buffers)
      emit();
  }
  if (!rel.buffers.empty())
    emit();
  return true;
}

std::vector<inbound_message> connection_core::take_inbound() {
  return std::exchange(inbound_, {});
}

void connection_core::take_inbound(std::vector<inbound_message>& into) {
  into.clear();
  into.swap(inbound_);
}

connection_core::counters connection_core::stats() const {
  auto s = stats_;
  s.queue_depth = queue_.size();
  if (streams_)
    s.streamed_bytes_in = streams_->copied();
  auto r = regs_->stats();
  s.registrations = r.registrations;
  s.registration_hits = r.hits;
  s.per_write_registrations = r.per_write;
  const auto* current = own_.current();
  s.arena_size = current ? current->size : 0;
  s.arena_held = own_.held_bytes();
  s.arena_in_use = s.bytes_placed_in - std::min(s.bytes_placed_in, arena_released_);
  s.peer_arena_free = peer_mapped_ ? peer_arena_.free_bytes() : 0;
  s.loans_open = lent_.size();
  return s;
}

}  // namespace riomesh::actors
