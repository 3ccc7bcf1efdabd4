// Large buffers by rendezvous, as UCX sends large messages: the sender
// leaves a buffer of at least lend_from bytes in its own memory and sends
// the envelope with the buffer's descriptor naming where it lent it
// (lent_buffers.hpp); no space in the receiver's arena is taken. The
// receiver fetches it when its window allows, into memory it chose (the
// receiving actor's destination, or its own), and delivers the message in
// its turn (fetch_order.hpp):
//   - where the connection reads one-sided (rdma with read resources both
//     ways): the sender mapped the buffer for reading; the receiver reads
//     it with RDMA READs and, fenced behind them, tells it `fetched`, upon
//     which the sender takes the map down and lets go of the buffer;
//   - elsewhere (tcp): the receiver maps its destination and asks `pull`;
//     the sender writes the buffer there from where it lies, then says
//     `pushed` behind the bytes, and lets go of it once they went. Where
//     the channel has maps written once (tcp), the map ends with its last
//     byte, with no unmap round, and a `pushed` short of it is a lie.
// A loan the sender could not map for reading (a buffer of many pieces,
// or no map slot free at the peer) lies in its own range of offsets and
// is pushed on either fabric. Every step names a loan by its offset; one
// the other side never made or already ended fails the connection with
// the reason.
#include <riomesh/actors/connection/connection_core.hpp>

#include "core_released.hpp"

#include <cstring>

namespace riomesh::actors {

namespace {

std::vector<buffer> pieces_of(const buffer& b) {
  return b.gathered() ? b.pieces() : std::vector<buffer>{b};
}

// Maps b piece after piece at consecutive offsets from `at`; the first
// failure's status (and nothing mapped) if any piece cannot be.
channels::status map_pieces(channels::iomap_access& io, const buffer& b, std::uint64_t at,
                            std::uint8_t access) {
  auto pieces = pieces_of(b);
  std::uint64_t offset = at;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    auto r = io.map(pieces[i].data(), pieces[i].size(), offset, access);
    if (r.st != channels::status::ok) {
      for (std::size_t j = 0, back = at; j < i; back += pieces[j].size(), ++j)
        io.unmap(back);
      return r.st;
    }
    offset += pieces[i].size();
  }
  return channels::status::ok;
}

// False if a map to be written once was not all written.
bool unmap_pieces(channels::iomap_access& io, const buffer& b, std::uint64_t at) {
  bool whole = true;
  for (const auto& p : pieces_of(b)) {
    whole = io.unmap(at) != channels::status::incomplete && whole;
    at += p.size();
  }
  return whole;
}

}  // namespace

bool connection_core::lends(const outbound_message& m, const buffer& b) const {
  bool carries = m.env.kind == envelope_kind::message || m.env.kind == envelope_kind::request ||
                 m.env.kind == envelope_kind::response;
  return settings_.lend_from > 0 && settings_.peer_fetches_lent && carries &&
         b.size() >= settings_.lend_from;
}

std::optional<std::uint64_t> connection_core::lend(const buffer& b) {
  // Read one-sided: a map the peer may only read (the fabric refuses its
  // writes there), one per piece of the peer's few map slots
  // (channel.iomap_size). A buffer of many pieces, or one no slot is free
  // for, is pushed instead: nothing to map here.
  constexpr std::size_t most_pieces_mapped = 4;
  bool mapped =
      settings_.reads_one_sided && (!b.gathered() || b.pieces().size() <= most_pieces_mapped);
  auto at = lent_.next_offset(b.size(), mapped);
  if (mapped &&
      (!at || map_pieces(io_, b, *at, channels::map_access::read) != channels::status::ok)) {
    mapped = false;
    at = lent_.next_offset(b.size(), false);
  }
  if (!at)
    return std::nullopt;
  ++stats_.buffers_lent;
  stats_.bytes_lent += b.size();
  return lent_.lend(b, mapped);
}

void connection_core::take_back_loan(std::uint64_t offset) {
  auto l = lent_.take(offset);
  if (l && l->mapped)
    unmap_pieces(io_, l->data, offset);
}

void connection_core::push_control(outbound_message&& m) {
  bool head_started = head_allocated_ || head_fetched_ || write_index_ > 0 || write_done_ > 0;
  queue_.insert(head_started && !queue_.empty() ? 1 : 0, std::move(m));
}

void connection_core::on_fetch_step(const arena_step& s) {
  auto where = "envelope " + std::to_string(decoder_.decoded()) + ": ";
  auto loan_at = [&] { return "the lent buffer at offset " + std::to_string(s.a); };
  switch (s.what) {
    case arena_step::kind::fetched: {
      auto* l = lent_.find(s.a);
      if (!l || !l->mapped)
        return fail(where + "the peer says it fetched " + loan_at() +
                    ", which this node did not lend it for reading");
      take_back_loan(s.a);
      return;
    }
    case arena_step::kind::pull: {
      auto* l = lent_.find(s.a);
      if (!l || l->mapped || l->pulled)
        return fail(where + "the peer asks for " + loan_at() +
                    " to be pushed: not lent to it for that, or asked for already");
      l->pulled = true;
      outbound_message m;
      m.writes.push_back({s.b, lent_.take(s.a)->data});
      m.env = encode_step({arena_step::kind::pushed, s.a, 0});
      // Its map at the peer is the peer's promise: no map there is a lie.
      m.on_failure = [this, at = s.b](send_failure, const std::string& why) {
        fail("pushing a lent buffer into the peer's map at offset " + std::to_string(at) + ": " +
             why);
      };
      push_control(std::move(m));
      return;
    }
    case arena_step::kind::pushed: {
      auto it = pulls_.find(s.a);
      if (it == pulls_.end())
        return fail(where + "the peer says it pushed " + loan_at() +
                    ", which this node did not ask for");
      auto p = std::move(it->second);
      pulls_.erase(it);
      // Where maps are written once (tcp), a push that left a byte
      // unwritten would show the application what that memory held.
      if (!unmap_pieces(io_, p.into, p.map))
        return fail(where + "the peer says it pushed " + loan_at() +
                    ", and did not write all of it");
      fetch_landed(p.job, std::move(p.into));
      return;
    }
    default:
      return;
  }
}

bool connection_core::start_fetches() {
  bool moved = false;
  if (fetch_order_.taken() > 0)
    if (auto n = released_->fetched_back.exchange(0))
      fetch_order_.give_back(n);
  if (!fetch_order_.pending())
    return false;  // what nearly every pump finds
  while (auto j = fetch_order_.next()) {
    auto into = landing_for(*j);
    if (settings_.reads_one_sided && j->offset < wire_envelope::lent_pushed_from) {
      outbound_message m;
      direct_fetch f;
      f.offset = j->offset;
      f.into = into;
      f.done = [this, job = *j, into](std::uint64_t) { fetch_landed(job, into); };
      m.fetch = std::move(f);
      m.env = encode_step({arena_step::kind::fetched, j->offset, j->length});
      m.on_failure = [this, at = j->offset](send_failure, const std::string& why) {
        fail("fetching the lent buffer at offset " + std::to_string(at) + ": " + why);
      };
      push_control(std::move(m));
      moved = true;
      continue;
    }
    if (pulls_.count(j->offset)) {
      fail("envelope " + std::to_string(decoder_.decoded()) + ": the lent buffer at offset " +
           std::to_string(j->offset) + " is lent twice");
      return true;
    }
    auto map = next_pull_map_;
    // Written once where the fabric can (tcp): no unmap round, and a push
    // that leaves a byte unwritten is caught.
    auto mapped = channels::status::unsupported;
    if (pulls_once_)
      mapped = map_pieces(io_, into, map, channels::map_access::write | channels::map_access::once);
    if (mapped == channels::status::unsupported) {
      pulls_once_ = false;
      mapped = map_pieces(io_, into, map, channels::map_access::write);
    }
    // Past the range even where mapping failed: pieces it took back stay
    // withdrawn until the peer acknowledges, and a retry there would clash.
    next_pull_map_ += (j->length + 4095) / 4096 * 4096 + 4096;
    if (mapped != channels::status::ok) {
      if (!pulls_.empty()) {
        fetch_order_.retry(*j);  // the peer's map table is full: once a pull ends
        return moved;
      }
      fail("cannot map " + std::to_string(j->length) +
           " bytes for the peer to push a lent buffer into (channel.iomap_size?)");
      return true;
    }
    pulls_[j->offset] = {*j, into, map};
    send_step({arena_step::kind::pull, j->offset, map});
    moved = true;
  }
  return moved;
}

buffer connection_core::landing_for(const fetch_order::job& j) {
  if (settings_.destination) {
    auto into = settings_.destination(j.length, j.receiver);
    if (into.size() >= j.length)
      return into.size() > j.length ? into.slice(0, j.length) : into;
  }
  // Cleared: a peer that says it pushed bytes it never wrote must not
  // show the application what the heap held before.
  auto into = buffer::heap(j.length);
  std::memset(into.data(), 0, j.length);
  return into;
}

// What the application gets: the destination, whose last handle gives
// its bytes back to the fetch window (from any thread), after the
// destination itself has gone (its memory free again for the next fetch
// to land in).
buffer connection_core::fetched_view(buffer into, std::uint64_t length) {
  if (into.gathered()) {  // pieces cannot be followed: counted back now
    fetch_order_.give_back(length);
    return into;
  }
  auto* data = into.data();
  auto where = into.where();
  auto home = into.home_block() ? *into.home_block() : buffer::home{};
  auto back = released_;
  return buffer::adopt(
      data, length, where,
      [into = std::move(into), back, length]() mutable {
        into = {};
        if (back->fetched_back.fetch_add(length) == 0 && back->wake)
          back->wake();
      },
      std::move(home));
}

void connection_core::fetch_landed(const fetch_order::job& j, buffer into) {
  if (!fetch_order_.landed(j, fetched_view(std::move(into), j.length)))
    return fail("a fetch of the lent buffer at offset " + std::to_string(j.offset) +
                " that no message waits for");
  ++stats_.buffers_fetched;
  stats_.bytes_fetched += j.length;
  fetch_order_.take_ready(inbound_);
}

void connection_core::hold_or_pass(inbound_message&& m, const std::vector<std::size_t>& lent) {
  if (lent.empty() && fetch_order_.idle()) {
    inbound_.push_back(std::move(m));
    return;
  }
  std::string error;
  if (!fetch_order_.hold(std::move(m), lent, error))
    fail("envelope " + std::to_string(decoder_.decoded()) + ": " + error);
}

}  // namespace riomesh::actors
