// The receive arena sized by demand (arena_sizing.hpp), both sides of it:
// as receiver, moving our arena to a larger or smaller segment and taking
// the old one down once the peer left it; as sender, asking for space and
// streaming what the peer cannot take whole.
#include <riomesh/actors/connection/buffer_stream.hpp>
#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/channels/memory/invalidation_bus.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

// After the peer kept its arena as it was: how long a sender waits for
// releases before it asks again; and how long a receiver holds a want
// it cannot meet yet before it says so.
constexpr auto want_again_after = std::chrono::milliseconds(100);

}  // namespace

arena_segment connection_core::make_segment(std::uint64_t size, std::uint64_t offset,
                                            std::string& error) {
  auto seg = settings_.make_segment(size, error);
  if (!seg.data)
    return seg;
  seg.offset = offset;
  seg.size = size;
  // The budget gets the bytes back with the memory: after the last view.
  alive_->fetch_add(1, std::memory_order_relaxed);
  seg.owner = std::shared_ptr<void>(seg.data, [memory = std::move(seg.owner), alive = alive_,
                                               budget = settings_.budget, size](void*) mutable {
    memory.reset();
    alive->fetch_sub(1, std::memory_order_relaxed);
    budget->give(size);
  });
  return seg;
}

void connection_core::send_step(const arena_step& s) {
  // Behind whatever is partly sent: the stream keeps the order.
  encode(encode_step(s), out_bytes_);
}

bool connection_core::move_arena(std::uint64_t size, clock::time_point now) {
  const auto* from = own_.current();
  auto offset = own_.next_offset();
  if (!from || offset > arena_span || size > arena_span - offset)
    return false;  // offsets are never reused: after 1 TiB of moves, it stays
  // At most two segments alive, the current one and the one it left: a
  // connection holds at most 1.5 times its cap (a segment at the cap and
  // the half one it shrank into), however slowly its application lets go
  // of what arrived.
  if (alive_->load(std::memory_order_relaxed) > 1)
    return false;
  bool growing = size > from->size;
  if (!settings_.budget->take(size, !growing))
    return false;
  std::string error;
  auto to = make_segment(size, offset, error);
  if (!to.data) {
    settings_.budget->give(size);
    return false;
  }
  if (io_.map(to.data, size, offset).st != channels::status::ok)
    return false;  // the segment's memory goes back with it
  awaiting_left_ = from->offset;
  own_.add(std::move(to));
  current_in_use_ = 0;
  sizing_->moved(now, 0);
  ++stats_.arena_moves;
  send_step({arena_step::kind::moved, offset, size});
  return true;
}

// A want is answered by a move as soon as one may be made: once the peer
// left the segment moved from last, and that one's views are gone (at most
// two segments alive). A sender gets a `kept` at once where no move will
// come; and after 100 ms of waiting for one if what it wants to place is
// larger than the current segment (it streams it then). Smaller, it places
// as releases come, and the move comes when it can.
bool connection_core::answer_want(clock::time_point now) {
  const auto* current = own_.current();
  auto target = sizing_ ? sizing_->on_want(*pending_want_, current->size) : std::nullopt;
  bool blocked = awaiting_left_ || alive_->load(std::memory_order_relaxed) > 1;
  if (target && blocked &&
      (now - pending_since_ < want_again_after || *pending_want_ <= current->size))
    return false;
  pending_want_.reset();
  if (!target || blocked || !move_arena(*target, now))
    send_step({arena_step::kind::kept, current->size, 0});
  return true;
}

bool connection_core::size_arena(clock::time_point now) {
  if (pending_want_)
    return answer_want(now);
  if (awaiting_left_ || !sizing_->due(now))
    return false;  // most pumps: no lookup, no lock for the fair share
  const auto* current = own_.current();
  auto target =
      sizing_->on_tick(now, current->size, current_in_use_, settings_.budget->fair_share());
  return target && move_arena(*target, now);
}

void connection_core::on_step(const envelope& e) {
  std::string error;
  auto where = "envelope " + std::to_string(decoder_.decoded()) + ": ";
  auto st = decode_step(e, error);
  if (!st)
    return fail(where + error);
  switch (st->what) {
    case arena_step::kind::fetched:
    case arena_step::kind::pull:
    case arena_step::kind::pushed:
      on_fetch_step(*st);
      return;
    case arena_step::kind::want:
      if (!pending_want_)
        pending_since_ = now_;
      pending_want_ = std::max(pending_want_.value_or(0), st->a);
      answer_want(now_);
      return;
    case arena_step::kind::moved: {
      auto from = peer_arena_.current_offset();
      if (!settings_.peer_arena_first || left_due_ || st->b > settings_.peer_arena_size ||
          !peer_arena_.move_to(st->a, st->b, arena_span))
        return fail(where + "the peer moved its arena to " + std::to_string(st->b) +
                    " bytes at offset " + std::to_string(st->a) +
                    ": not past its segments so far, beyond its " +
                    std::to_string(settings_.peer_arena_size) +
                    " bytes, or before it was left, or an arena it said was fixed");
      wanting_ = false;
      left_due_ = from;
      return;
    }
    case arena_step::kind::left: {
      if (!awaiting_left_ || st->a != *awaiting_left_)
        return fail(where + "the peer left the arena segment at offset " + std::to_string(st->a) +
                    ", which is not the one this node moved from");
      const auto* old = own_.holding(st->a, 1);
      io_.unmap(st->a);
      // Views sent on from it had the send cache register it, holding it.
      channels::invalidation_bus::global().publish(old->data, old->size);
      own_.remove(st->a);
      awaiting_left_.reset();
      return;
    }
    case arena_step::kind::kept:
      wanting_ = false;
      next_want_ = now_ + want_again_after;
      return;
  }
}

void connection_core::arena_going() const {
  if (!elastic())
    return;
  own_.each(
      [](const arena_segment& s) { channels::invalidation_bus::global().publish(s.data, s.size); });
}

bool connection_core::on_no_space(outbound_message& m) {
  std::uint64_t need = 0, largest = 0;
  for (const auto& b : m.placed) {
    if (lends(m, b))
      continue;  // no arena space: the peer fetches it
    need += arena_allocator::round_up(b.size());
    largest = std::max(largest, arena_allocator::round_up(b.size()));
  }
  auto current = peer_arena_.current_size();
  bool grows = settings_.peer_arena_first && current < settings_.peer_arena_size;
  bool refused = !wanting_ && now_ < next_want_;
  // What can never fit what the peer gives streams through it in pieces.
  if (largest > current && (!grows || refused))
    return split_head(current);
  if (!grows || wanting_ || refused)
    return false;  // releases make room
  wanting_ = true;
  send_step({arena_step::kind::want, need, 0});
  return true;
}

bool connection_core::split_head(std::uint64_t fits) {
  auto m = std::move(queue_.front());
  // Its direct writes and fetch went; its pieces go before it.
  m.writes.clear();
  m.fetch.reset();
  auto piece = std::max<std::uint64_t>(fits / 4 / 4096 * 4096, 4096);
  std::vector<outbound_message> parts;
  if (m.env.kind == envelope_kind::piece) {
    // A piece larger than the peer gives now: smaller ones of the same
    // buffer, in order; the receiver appends them alike.
    const auto& b = m.placed[0];
    for (std::uint64_t at = 0; at < b.size(); at += piece) {
      outbound_message p;
      p.env = m.env;
      p.placed.push_back(b.slice(at, std::min<std::uint64_t>(piece, b.size() - at)));
      parts.push_back(std::move(p));
    }
  } else {
    std::uint64_t streamed = 0;
    std::uint32_t streams = 0;
    for (const auto& b : m.placed)
      if (b.size() > fits) {
        streamed += b.size();
        ++streams;
      }
    if (streamed > std::min(settings_.max_streamed, settings_.peer_max_streamed) ||
        streams > std::min(settings_.max_streams, settings_.peer_max_streams)) {
      queue_.front() = std::move(m);
      drop_head("a message whose buffers (" + std::to_string(streams) + " of them, " +
                    std::to_string(streamed) + " bytes) do not fit the " + std::to_string(fits) +
                    " bytes the peer's arena has now, more than may stream",
                send_failure::too_large);
      return true;
    }
    parts = split_for_arena(std::move(m), fits, piece);
  }
  queue_.replace_front(std::move(parts));
  write_index_ = write_done_ = 0;
  head_fetched_ = false;
  return true;
}

}  // namespace riomesh::actors
