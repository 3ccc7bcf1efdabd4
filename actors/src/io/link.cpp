#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/core_drive.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/actors/io/send_order.hpp>
#include <riomesh/channels/memory/invalidation_bus.hpp>
#include <riomesh/log.hpp>

#include <caf/mailbox_element.hpp>
#include <caf/make_message.hpp>
#include <caf/message_id.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

// How long an ending link waits for the peer to take our in-band goodbye
// (rdma: an rsocket peer ignores the connection manager's disconnect).
constexpr std::chrono::seconds leave_linger{1};
// Rounds of setup and core per wake: enough to drain a burst, bounded so
// that one busy peer cannot starve the others of the thread.
constexpr int rounds_per_wake = 16;

}  // namespace

link::link(std::uint64_t id, std::shared_ptr<channels::channel> ch, const connection_params& p,
           io_loop& loop, const std::shared_ptr<link_events>& events)
    : id_(id),
      ch_(std::move(ch)),
      params_(p),
      loop_(loop),
      events_(events),
      where_("peer " + ch_->peer()) {}

link::~link() {
  if (params_.sessions)
    params_.sessions->ended(ticket_);
}

void link::bind(const caf::strong_actor_ptr& actor) {
  actor_ = caf::weak_actor_ptr{actor.get()};
  keep_actor_ = actor;
}

link::submitted link::submit(outbound_message&& m) {
  switch (current_phase()) {
    case phase::setting_up:
    case phase::up:
      break;
    case phase::leaving:
    case phase::closed:
      return submitted::closed;
    default:
      return submitted::stopping;
  }
  if (depth() >= params_.max_pending) {
    refused_.store(true, std::memory_order_relaxed);
    return submitted::congested;
  }
  // A sender on the I/O thread itself (a handler the thread runs) needs no
  // hand-off: the link takes the message now and sends it, with whatever
  // else the sender's turn queues, when that turn ends (io_loop::send_taken). Only while no
  // order waits in the actor's mailbox (pending_ counts those beyond the
  // backlog: a sender's own earlier ones would show), so nothing overtakes.
  if (loop_.on_io_thread() && pending_.load(std::memory_order_relaxed) == backlog_) {
    std::size_t bytes = m.env.body.size();
    for (const auto& b : m.placed)
      bytes += b.size();
    loop_.took_bytes(bytes);
    pending_.fetch_add(1, std::memory_order_relaxed);
    take(std::move(m));
    took(1);
    if (!std::exchange(wake_due_, true))
      loop_.send_after_turn(shared_from_this());
    return submitted::queued;
  }
  auto actor = actor_.lock();
  if (!actor)
    return submitted::closed;
  pending_.fetch_add(1, std::memory_order_relaxed);
  // Should the actor be gone by now, the order tells its sender.
  actor->enqueue(
      caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, send_order{std::move(m)}),
      nullptr);
  return submitted::queued;
}

void link::take(outbound_message&& m) {
  if (is(phase::closed))
    return fail(m, end_failure_, where_ + ": connection closed: " + end_);
  // Up, and nothing taken before it waits: straight to the core.
  if (core_ && taken_.empty())
    return submit_to_core(std::move(m));
  taken_.push_back(std::move(m));
}

// The n messages moved from the mailbox to the link: pending by the same
// count; the backlog's change since last counted (what the core sent, or
// a closed link's) goes with them in one step.
void link::took(std::size_t n) {
  // Closed: they failed as they were taken, and left.
  auto held = is(phase::closed) ? backlog_ : taken_.size() + (core_ ? core_->queue_depth() : 0);
  pending_.fetch_add(held - backlog_ - n, std::memory_order_relaxed);  // modulo 2^64
  backlog_ = held;
}

void link::set_backlog(std::size_t n) {
  pending_.fetch_add(n - backlog_, std::memory_order_relaxed);  // modulo 2^64
  backlog_ = n;
}

void link::start(clock::time_point now) {
  ch_->on_progress_thread();
  setup_deadline_ = now + params_.setup_limit;
  next_tick_ = now + params_.tick;
  session_setup::options o;
  o.mine.name = params_.node_name;
  o.mine.terms = {params_.arena_size,
                  params_.max_body,
                  params_.max_buffers,
                  params_.incarnation,
                  static_cast<std::uint32_t>(params_.peer_timeout.count()),
                  params_.max_streamed,
                  params_.max_streams,
                  sized_by_demand() ? params_.arena_min : 0,
                  params_.fetches_lent,
                  params_.identity};
  o.mine.encrypt = params_.encrypt;
  o.dialer = params_.dialed;
  o.expected = params_.expected;
  o.allow_unauthenticated = params_.allow_unauthenticated;
  if (params_.sessions) {
    ticket_ = params_.sessions->open();
    o.claim = [sessions = params_.sessions, ticket = ticket_](const session_registry::claim& c) {
      return sessions->ask(ticket, c);
    };
  }
  setup_ = std::make_unique<session_setup>(params_.tls, over(*ch_, std::move(o)));
  on_io(now);  // the greeting goes out now
}

void link::become_connected() {
  peer_terms_ = setup_->peer_terms();
  peer_name_ = setup_->peer_name();
  authenticated_ = setup_->authenticated();
  admin_ = setup_->admin();
  replaces_ = setup_->verdict() == session_registry::verdict::replaces;
  peer_incarnation_ = peer_terms_.incarnation;
  where_ = "peer " + ch_->peer() + " (" + peer_name_ + ")";
  connection_core::settings s;
  s.peer = ch_->peer();
  // The actor's mailbox bounds what waits (submit); the core takes all it
  // is given.
  s.max_pending = std::numeric_limits<std::size_t>::max();
  s.max_streamed = params_.max_streamed;
  s.max_streams = params_.max_streams;
  s.inbound.arena_size = sized_by_demand() ? params_.arena_min : params_.arena_size;
  s.inbound.max_body = params_.max_body;
  s.inbound.max_buffers = params_.max_buffers;
  s.releases = params_.releases;
  s.peer_arena_size = peer_terms_.arena_size;
  s.peer_max_body = peer_terms_.max_body;
  s.peer_max_buffers = peer_terms_.max_buffers;
  s.peer_max_streamed = peer_terms_.max_streamed;
  s.peer_max_streams = peer_terms_.max_streams;
  s.peer_arena_first = peer_terms_.arena_first;
  s.lend_from = params_.lend_from;
  s.peer_fetches_lent = peer_terms_.fetches_lent;
  s.max_loans = reads_one_sided() ? params_.max_loans : params_.max_pushed_loans;
  s.inbound.accepts_lent = params_.fetches_lent;
  s.fetches.window = params_.fetch_window;
  s.reads_one_sided = reads_one_sided();
  if (params_.destination)
    s.destination = [fn = params_.destination, peer = peer_name_](std::uint64_t size,
                                                                  std::uint64_t receiver) {
      return fn(peer, receiver, size);
    };
  // Released views ring the doorbell, from whatever thread drops them; a
  // weak reference keeps the link from living on in them.
  std::weak_ptr<link> me = shared_from_this();
  auto wake = [me, loop = &loop_] {
    if (auto l = me.lock())
      loop->wake(l);
  };
  if (sized_by_demand()) {
    s.arena_cap = params_.arena_size;
    s.sizing_period = params_.arena_period;
    if (params_.sessions)
      s.budget = std::make_shared<session_budget>(params_.sessions, ticket_);
    s.make_segment = [memory = params_.arena_memory, pool = params_.arena_pool, peer = peer_name_](
                         std::uint64_t size, std::string& error) {
      if (pool)
        return pool->take(size, peer, error);
      arena_segment seg;
      auto region = channels::memory_region::make(memory, size, "riomesh-arena", error);
      if (!region)
        return seg;
      seg.data = region->data();
      seg.fd = region->fd();
      seg.owner = std::move(region);
      return seg;
    };
    core_ = std::make_unique<connection_core>(*ch_, nullptr, s, wake);
    return connected();
  }
  std::string error;
  arena_ = channels::memory_region::make(params_.arena_memory, params_.arena_size, "riomesh-arena",
                                         error);
  if (!arena_)
    return leave("no receive arena: " + error);
  s.arena_owner = arena_;
  s.arena_fd = arena_->fd();
  s.arena_dmabuf = arena_->dmabuf();
  unsigned char* placed_into = arena_->data();
  std::string why;
  auto* reg = ch_->registration();
  if (arena_->dmabuf() && reg && !reg->maps_dmabuf(why)) {
    staging_ = channels::memory_region::make({}, params_.arena_size, "riomesh-staging", error);
    if (!staging_)
      return leave("no staging arena for the dma-buf one: " + error);
    s.staged_to = arena_->data();
    placed_into = staging_->data();
    // The runtime said so at start (note_dmabuf_staging); the copies count.
  }
  core_ = std::make_unique<connection_core>(*ch_, placed_into, s, wake);
  connected();
}

void link::connected() {
  ch_->keep_alive_within(std::chrono::milliseconds(peer_terms_.silence_limit_ms));
  set_phase(phase::up);
  if (auto e = events_.lock())
    e->established(*this);
}

void link::fail(outbound_message& m, send_failure why, const std::string& detail) {
  if (!m.on_failure)
    return;
  auto tell = std::move(m.on_failure);
  m.on_failure = nullptr;
  tell(why, detail);
}

void link::submit_to_core(outbound_message&& m) {
  // A channel that closed since the core was last driven takes nothing
  // more: the sender hears so now, with the channel's reason.
  if (ch_->closed())
    core_->on_closed(ch_->reason());  // ignored once the core has its reason
  switch (core_->submit(std::move(m))) {
    case connection_core::submit_status::queued:
    case connection_core::submit_status::congested:  // unbounded here
      break;
    case connection_core::submit_status::too_large: {
      std::uint64_t size = m.env.body.size();
      for (const auto& b : m.placed)
        size += b.size();
      auto buffers = m.placed.size() - ((m.env.flags & envelope::body_placed) ? 1 : 0);
      // The smaller side's streaming limits hold: the receiver's come in
      // its session terms.
      bool theirs = peer_terms_.max_streamed < params_.max_streamed ||
                    peer_terms_.max_streams < params_.max_streams;
      auto streamed = std::min(params_.max_streamed, peer_terms_.max_streamed);
      auto streams = std::min<std::uint64_t>(params_.max_streams, peer_terms_.max_streams);
      fail(m, send_failure::too_large,
           where_ + ": a message of " + std::to_string(size) + " bytes in " +
               std::to_string(buffers) +
               " buffers is more than this connection carries: buffers up to the "
               "peer's arena (" +
               std::to_string(peer_terms_.arena_size) +
               " bytes), larger ones lent or in pieces up to channel.max_streamed (" +
               std::to_string(streamed) + " bytes in all, " + std::to_string(streams) +
               " at once; " + (theirs ? "the receiver's" : "this node's") + "), at most " +
               std::to_string(peer_terms_.max_buffers) +
               " buffers; large data goes best in a riomesh::buffer (placed, "
               "not serialized)");
      break;
    }
    case connection_core::submit_status::closed:
      fail(m, send_failure::node_lost, where_ + ": connection closed: " + core_->reason());
      break;
  }
}

void link::serve_taken() {
  // By index: a failure's callback may take another message meanwhile.
  for (std::size_t i = 0; i < taken_.size(); ++i)
    submit_to_core(std::move(taken_[i]));
  taken_.clear();
}

bool link::poll(clock::time_point now) {
  // What a spin usually finds: nothing. Then it costs one look at the
  // completion queue, not a round of every layer.
  auto p = current_phase();
  if (p == phase::closed)
    return false;
  if (!ch_->busy_poll() && taken_.empty() && (p == phase::up || p == phase::shut))
    return false;
  return on_io(now, true, true);
}

// Draining: once everything queued went and the channel has sent it, the
// farewell; once that went too, the write side shuts.
void link::after_draining(bool& moved, bool& ended) {
  auto p = current_phase();
  if ((p == phase::draining || p == phase::farewell) && core_->idle() && ch_->drained() &&
      depth() == 0) {
    if (p == phase::draining) {
      set_phase(phase::farewell);
      core_->say_farewell();
    } else {
      set_phase(phase::shut);
      ch_->shutdown(channels::shutdown_how::write);
    }
    moved = true;
  }
  // Shut, the link still reads until the peer ends its side too (it does
  // once it has read our farewell) or the node's drain limit drops it: a
  // tcp socket closed with bytes unread (a late release, a credit) is
  // reset, and a reset throws away what the peer had not read yet.
  if (is(phase::shut) && (core_->closed() || ch_->closed())) {
    close("this node stopped", false);
    ended = true;
  }
}

bool link::core_round(clock::time_point now, bool& ended) {
  serve_taken();
  bool moved = drive_core(*ch_, *core_, now);
  // (A message streamed in pieces counts once per piece: conservative.)
  set_backlog(core_->queue_depth());
  core_->take_inbound(arrived_);
  if (!arrived_.empty()) {
    moved = true;
    if (auto e = events_.lock())
      for (auto& m : arrived_) {
        e->inbound(*this, m);
        if (is(phase::closed) || is(phase::leaving)) {  // dropped for what it sent
          arrived_.clear();
          ended = true;
          return true;
        }
      }
    arrived_.clear();  // what the handlers left (their buffers) goes now
  }
  after_draining(moved, ended);
  if (ended)
    return true;
  if (depth() <= bound() / 2 && refused_.load(std::memory_order_relaxed) &&
      refused_.exchange(false))
    if (auto e = events_.lock())
      e->writable(*this);
  if (core_->closed()) {
    if (core_->peer_stopped())
      close(core_->reason(), true);  // it said goodbye: nobody to tell
    else
      leave(core_->reason());
    ended = true;
  }
  return moved;
}

// After a round that moved: whether another, with no new look at the
// channel, would find nothing. The round read what the channel held, took
// every event, pumped the core and sent until blocked or empty; what it
// cannot have finished is what came in meanwhile: messages taken for the
// core, events its sends raised, sends its handlers queued or its flush
// left, and releases its pump held back behind output it then sent. Those,
// and a phase change, go another round; a round that only read and
// delivered does not (a sixth of a round trip's instructions were that
// confirming round).
bool link::settled(clock::time_point now) const {
  return taken_.empty() && !ch_->has_events() && core_ && core_->queue_depth() == 0 &&
         core_->output().second == 0 && !core_->releases_due(now);
}

bool link::on_io(clock::time_point now, bool busy_poll, bool polled) {
  wake_due_ = false;  // what submit() took directly goes in these rounds
  if (is(phase::closed))
    return false;
  // Its actor may take a send before the thread has started it (adopt is
  // a task, the actor's turn round work): what it took waits for start().
  if (is(phase::setting_up) && !setup_)
    return false;
  // What the rounds below send leaves in one write when they are done.
  // That write may finish iowrites: their sources free, the messages that
  // waited for them (a loan's end) go in another turn, not at the next
  // wake, which may never come (the peer owes us nothing).
  struct corked {
    link& l;
    explicit corked(link& x) : l(x) { l.ch_->cork(true); }
    ~corked() {
      bool waiting = l.ch_->has_events();  // not for this turn: not again
      l.ch_->cork(false);
      if (!waiting && l.ch_->has_events() && !l.is(phase::closed))
        l.loop_.wake(l.shared_from_this());
    }
  } batch{*this};
  if (!polled) {
    if (busy_poll)
      ch_->busy_poll();
    else
      ch_->progress();
  }
  if (is(phase::leaving)) {
    bool told = ch_->closed() || (!ch_->awaits_peer_on_close() && ch_->drained());
    if (told || now >= leave_by_)
      close(leaving_, false);
    return false;
  }
  bool moved_any = false;
  for (int round = 0; round < rounds_per_wake; ++round) {
    bool moved = false, ended = false;
    auto before = current_phase();
    if (is(phase::setting_up)) {
      moved = drive_session(*ch_, *setup_);
      if (setup_->failed()) {
        wrong_node_ = setup_->wrong_node();
        leave(setup_->reason());
        return true;
      }
      if (setup_->established())
        become_connected();
      if (!core_)
        return moved || moved_any;
    }
    moved = core_round(now, ended) || moved;
    if (ended)
      return true;
    moved_any = moved_any || moved;
    if (!moved || (before == current_phase() && settled(now)))
      break;
    // Its share of this wake is used up with work left: it goes again
    // after the others had theirs (nothing else may signal for it).
    if (round + 1 == rounds_per_wake)
      loop_.wake(shared_from_this());
  }
  plan(now);
  return moved_any;
}

void link::plan(clock::time_point now) {
  next_deadline_ = next_tick_;
  if (!core_)
    next_deadline_ = std::min(next_deadline_, setup_deadline_);
  else if (auto when = core_->deadline())
    next_deadline_ = std::min(next_deadline_, *when);
  if (is(phase::leaving))
    next_deadline_ = std::min(next_deadline_, leave_by_);
  (void)now;
}

void link::on_timer(clock::time_point now) {
  if (is(phase::closed))
    return;
  if (now >= next_tick_) {
    next_tick_ = now + params_.tick;
    if (params_.arena_pool)
      params_.arena_pool->trim(now);
    ch_->tick(now);
  }
  on_io(now, true);
  if (is(phase::closed))
    return;
  if (is(phase::setting_up) && now >= setup_deadline_)
    leave(where_ + ": no session within " + std::to_string(params_.setup_limit.count()) +
          " ms of connecting (the handshake did not finish)");
  if (!is(phase::closed) && !is(phase::leaving) && ch_->closed())
    close(where_ + ": " + ch_->reason(), false);
  if (!is(phase::closed))
    plan(now);
}

// Ends a link whose channel may still work (given up on, refused, or the
// peer lied). The peer is told in band first: an rsocket peer ignores the
// connection manager's disconnect, and its next write to a queue pair that
// is gone would never complete. A channel that has failed closes at once.
void link::leave(std::string reason) {
  if (is(phase::closed) || is(phase::leaving))
    return;
  leaving_ = std::move(reason);
  set_phase(phase::leaving);
  leave_by_ = clock::now() + leave_linger;
  ch_->shutdown(channels::shutdown_how::both);
  next_deadline_ = std::min(next_deadline_, leave_by_);
  bool told = ch_->closed() || (!ch_->awaits_peer_on_close() && ch_->drained());
  if (told)
    close(leaving_, false);
}

void link::close(const std::string& reason, bool stopped) {
  if (is(phase::closed))
    return;
  end_ = reason;
  end_failure_ = drain_asked_ ? send_failure::stopped : send_failure::node_lost;
  set_phase(phase::closed);
  // Older first: what the core still held, then what waited for it.
  if (core_)
    core_->fail_queued(end_failure_, where_ + ": connection closed: " + reason);
  for (auto& m : taken_)
    fail(m, end_failure_, where_ + ": connection closed: " + reason);
  taken_.clear();
  set_backlog(0);
  if (auto e = events_.lock())
    e->closed(*this, reason, stopped);
  if (drained_)
    std::exchange(drained_, nullptr)();
  // Buffers placed in our arena and sent on had the domain's send cache
  // register the whole arena, and that registration holds the arena: told
  // it is going, the cache lets it go (with its pinned pages) now instead
  // of at its idle trim. Buffers of it still held re-register if sent.
  if (arena_)
    channels::invalidation_bus::global().publish(arena_->data(), arena_->size());
  else if (core_)
    core_->arena_going();
  // The actor ends with the link (stopped: in order, from either side);
  // orders still in its mailbox fail as it takes them, and any that come
  // later as its mailbox closes.
  if (auto actor = std::exchange(keep_actor_, nullptr))
    actor->enqueue(nullptr, caf::make_message_id(),
                   caf::make_message(closed_atom::value, reason, stopped || drain_asked_), nullptr);
}

void link::evict(const std::string& reason) {
  if (is(phase::setting_up))
    leave(where_ + ": " + reason);
}

void link::drain(std::function<void()> done) {
  if (is(phase::closed)) {
    if (done)
      done();
    return;
  }
  drained_ = std::move(done);
  drain_asked_ = true;
  if (is(phase::setting_up)) {
    leave("this node stopped");
    return;
  }
  if (is(phase::up))
    set_phase(phase::draining);
  on_io(clock::now(), true);
}

void link::drop(const std::string& reason) {
  close(reason, false);
}

// A gathered buffer is mapped piece by piece at consecutive offsets: one
// offset space for the peer, whose writes split at the pieces' ends as
// they split at any map's end.
bool link::expose(buffer b, std::uint64_t& offset, std::string& error, std::uint8_t access) {
  if (is(phase::closed) || !core_) {
    error = where_ + ": connection not ready";
    return false;
  }
  if (b.empty()) {
    error = where_ + ": an empty buffer cannot be mapped";
    return false;
  }
  std::vector<buffer> pieces = b.gathered() ? b.pieces() : std::vector<buffer>{b};
  auto& next = (access & channels::map_access::write) ? next_map_ : next_read_map_;
  std::uint64_t at = next;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    auto r = ch_->map(pieces[i].data(), pieces[i].size(), at, access);
    if (r.st != channels::status::ok) {
      for (std::size_t j = 0; j < i; ++j) {
        at -= pieces[i - 1 - j].size();
        ch_->unmap(at);
      }
      error = where_ + ": cannot map " + std::to_string(pieces[i].size()) + " bytes" +
              (pieces.size() > 1
                   ? " (piece " + std::to_string(i) + " of " + std::to_string(pieces.size()) + ")"
                   : std::string{}) +
              ": " + engine::to_string(r.st) + " (channel.iomap_size?)";
      return false;
    }
    at += pieces[i].size();
  }
  offset = next;
  next += (b.size() + 4095) & ~std::uint64_t{4095};
  exposed_[offset] = std::move(b);
  return true;
}

bool link::unexpose(std::uint64_t offset) {
  auto it = exposed_.find(offset);
  if (it == exposed_.end() || is(phase::closed))
    return false;
  if (it->second.gathered()) {
    for (const auto& p : it->second.pieces()) {
      ch_->unmap(offset);
      offset += p.size();
    }
  } else {
    ch_->unmap(offset);
  }
  exposed_.erase(it);
  return true;
}

connection_core::counters link::stats() const {
  auto c = core_ ? core_->stats() : connection_core::counters{};
  c.queue_depth = depth();
  c.encrypted = encrypted();
  c.authenticated = authenticated_;
  c.exposed_maps = exposed_.size();
  for (const auto& [offset, b] : exposed_)
    c.exposed_bytes += b.size();
  return c;
}

}  // namespace riomesh::actors
