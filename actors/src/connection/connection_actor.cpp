#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_actor.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/progress/progress_loop.hpp>
#include <riomesh/buffer_inspect.hpp>
#include <riomesh/errc.hpp>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <map>
#include <optional>

namespace riomesh::actors {
namespace {

struct connection_state {
  std::shared_ptr<channels::channel> ch;
  progress_loop* loop = nullptr;
  connection_params params;
  caf::actor owner;
  std::unique_ptr<session_setup> setup;
  std::shared_ptr<unsigned char[]> arena;  // views of it hold it too
  std::unique_ptr<connection_core> core;
  std::vector<outbound_message> early;      // submitted before setup finished
  std::map<std::uint64_t, buffer> exposed;  // mapped for the peer, by offset
  // Where inbound messages go, once the owner has kept this connection as
  // the one to its peer; until then they wait here, in order.
  caf::actor deliver_to;
  std::vector<inbound_message> held;
  bool watching = false, pump_queued = false, closed = false;
  // A send was refused as congested: the owner hears when the queue has
  // drained to half.
  bool congested = false;
  // Stopping: no new sends; what is queued goes out, then a clean shutdown.
  bool draining = false, farewell = false, shut = false;
  caf::response_promise drained;
  std::uint64_t ticket = 0;  // in params.sessions
  // When a delayed pump for the release batch is due, if one is set: one
  // timer at a time, not one per pump.
  std::optional<connection_core::clock::time_point> wake_at;
  connection_core::clock::time_point setup_deadline;
  // Ending: the reason to close with, once the peer has been told in band
  // or `leave_by` has passed.
  std::optional<std::string> leaving;
  connection_core::clock::time_point leave_by;

  ~connection_state() {
    if (watching)
      loop->unwatch(ch->wait_fd());
    if (params.sessions)
      params.sessions->ended(ticket);
  }
  static const char* name;
};
const char* connection_state::name = "riomesh.connection";

using self_ptr = caf::stateful_actor<connection_state>*;

void close(self_ptr self, const std::string& reason, bool peer_stopped = false) {
  auto& st = self->state;
  if (st.closed)
    return;
  st.closed = true;
  if (st.drained.pending())
    st.drained.deliver(true);
  self->send(st.owner, closed_atom::value, reason, peer_stopped);
  self->quit();
}

void queue_pump(self_ptr self) {
  if (!self->state.pump_queued) {
    self->state.pump_queued = true;
    self->send(self, pump_atom::value);
  }
}

// How long an ending connection waits for the peer to take our in-band
// goodbye. Its acknowledgement takes a round trip; a peer that never
// acknowledges costs no more than this.
constexpr std::chrono::seconds leave_linger{1};

// Ends a connection whose channel may still work (given up on, refused, or
// the peer lied). The peer is told in band first: an rsocket peer ignores
// the connection manager's disconnect, and its next write to a queue pair
// that is gone would never complete. A channel that has failed closes at
// once.
void leave(self_ptr self, std::string reason) {
  auto& st = self->state;
  if (st.closed || st.leaving)
    return;
  st.leaving = std::move(reason);
  st.leave_by = connection_core::clock::now() + leave_linger;
  st.ch->shutdown(channels::shutdown_how::both);
  queue_pump(self);
}

void deliver(self_ptr self, inbound_message&& m) {
  auto& st = self->state;
  if (st.deliver_to)
    self->send(st.deliver_to, inbound_atom::value, st.setup->peer_name(), std::move(m));
  else
    st.held.push_back(std::move(m));
}

void become_connected(self_ptr self) {
  auto& st = self->state;
  const auto& peer = st.setup->peer_terms();
  connection_core::settings s;
  s.max_pending = st.params.max_pending;
  s.max_streamed = st.params.max_streamed;
  s.max_streams = st.params.max_streams;
  s.inbound.arena_size = st.params.arena_size;
  s.inbound.max_body = st.params.max_body;
  s.inbound.max_buffers = st.params.max_buffers;
  s.releases = st.params.releases;
  s.peer_arena_size = peer.arena_size;
  s.peer_max_body = peer.max_body;
  s.peer_max_buffers = peer.max_buffers;
  st.arena.reset(new unsigned char[st.params.arena_size]);
  s.arena_owner = st.arena;
  // Releases come from any thread; the weak address keeps no cycle.
  caf::actor_addr me = self->address();
  st.core = std::make_unique<connection_core>(*st.ch, st.arena.get(), s, [me] {
    if (auto a = caf::actor_cast<caf::actor>(me))
      caf::anon_send(a, pump_atom::value);
  });
  st.ch->keep_alive_within(std::chrono::milliseconds(peer.silence_limit_ms));
  if (st.params.sessions && st.params.dialed)
    st.params.sessions->established(st.ticket, st.setup->peer_name(), peer.incarnation);
  self->send(st.owner, connected_atom::value, st.setup->peer_name(), st.setup->authenticated(),
             st.setup->verdict() == session_registry::verdict::replaces, peer.incarnation);
  for (auto& m : st.early)
    st.core->submit(std::move(m));
  st.early.clear();
}

void pump(self_ptr self) {
  auto& st = self->state;
  st.pump_queued = false;
  if (st.closed)
    return;
  st.ch->progress();
  if (st.leaving) {
    bool told = st.ch->closed() || (!st.ch->awaits_peer_on_close() && st.ch->drained());
    if (told || connection_core::clock::now() >= st.leave_by)
      return close(self, *st.leaving);
    st.ch->arm();
    st.loop->rearm(st.ch->wait_fd(), st.ch->wants_write());
    return;
  }
  bool moved = false;
  if (!st.core) {
    moved = st.setup->pump();
    if (st.setup->failed())
      return leave(self, st.setup->reason());
    if (st.setup->established())
      become_connected(self);
  }
  if (st.core) {
    moved = st.core->pump() || moved;
    for (auto& m : st.core->take_inbound())
      deliver(self, std::move(m));
    if (st.draining && st.core->idle() && st.ch->drained()) {
      if (!st.farewell) {
        st.farewell = true;
        st.core->say_farewell();
        moved = true;
      } else if (!st.shut) {
        st.shut = true;
        st.ch->shutdown(channels::shutdown_how::write);
        moved = true;
      } else {
        return close(self, "this node stopped");
      }
    }
    if (st.congested && st.core->queue_depth() <= st.params.max_pending / 2) {
      st.congested = false;
      self->send(st.owner, writable_atom::value);
    }
    if (st.core->closed() && st.core->peer_stopped())
      return close(self, st.core->reason(), true);  // it said goodbye: nobody to tell
    if (st.core->closed())
      return leave(self, st.core->reason());
    auto now = connection_core::clock::now();
    if (st.wake_at && *st.wake_at <= now)
      st.wake_at.reset();
    if (auto when = st.core->deadline(); when && (!st.wake_at || *when < *st.wake_at)) {
      st.wake_at = *when;
      self->delayed_send(self, std::max(*when - now, connection_core::clock::duration::zero()),
                         pump_atom::value);
    }
  }
  if (moved) {
    queue_pump(self);  // more may be ready: look again before sleeping
  } else {
    st.ch->arm();
    st.loop->rearm(st.ch->wait_fd(), st.ch->wants_write());
  }
}

caf::behavior connection(self_ptr self, std::shared_ptr<channels::channel> ch, progress_loop* loop,
                         connection_params p, caf::actor owner) {
  auto& st = self->state;
  st.ch = std::move(ch);
  st.loop = loop;
  st.params = p;
  st.owner = std::move(owner);
  st.setup_deadline = connection_core::clock::now() + p.setup_limit;
  session_terms terms{p.arena_size, p.max_body, p.max_buffers, p.incarnation,
                      static_cast<std::uint32_t>(p.peer_timeout.count())};
  session_setup::claim_fn claim;
  if (p.sessions) {
    st.ticket = p.sessions->open();
    if (!p.dialed)
      claim = [sessions = p.sessions, ticket = st.ticket](const session_registry::claim& c) {
        return sessions->ask(ticket, c);
      };
  }
  st.setup =
      std::make_unique<session_setup>(*st.ch, handshake(p.node_name, p.creds, random_nonce()),
                                      terms, p.allow_unauthenticated, std::move(claim));
  caf::actor_addr me = self->address();
  st.watching = loop->watch(
      st.ch->wait_fd(),
      [me] {
        if (auto a = caf::actor_cast<caf::actor>(me))
          caf::anon_send(a, pump_atom::value);
      },
      st.ch->wants_write());
  if (!st.watching) {
    close(self, "peer " + st.ch->peer() + ": the progress loop cannot watch the connection");
  } else {
    queue_pump(self);  // the greeting goes out now
    self->delayed_send(self, p.tick, tick_atom::value);
  }
  return {
      [=](pump_atom) { pump(self); },
      [=](route_atom, caf::actor& to) {
        auto& st = self->state;
        st.deliver_to = std::move(to);
        auto held = std::move(st.held);
        for (auto& m : held)
          deliver(self, std::move(m));
      },
      [=](tick_atom) {
        auto& st = self->state;
        if (st.closed)
          return;
        auto now = connection_core::clock::now();
        st.ch->tick(now);
        pump(self);
        if (!st.closed && !st.core && !st.leaving && now >= st.setup_deadline)
          leave(self, "peer " + st.ch->peer() + ": no session within " +
                          std::to_string(st.params.setup_limit.count()) +
                          " ms of connecting (the handshake did not finish)");
        if (!st.closed && !st.leaving && st.ch->closed())
          close(self, "peer " + st.ch->peer() + ": " + st.ch->reason());
        if (!st.closed)
          self->delayed_send(self, st.params.tick, tick_atom::value);
      },
      [=](stats_atom) {
        auto& st = self->state;
        auto c = st.core ? st.core->stats() : connection_core::counters{};
        c.queue_depth += st.early.size();
        return c;
      },
      [=](stop_atom, std::string& why) {
        // Closed before its session: the node needs the room.
        auto& st = self->state;
        if (!st.core)
          leave(self, "peer " + st.ch->peer() + ": " + why);
      },
      [=](stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        if (st.closed)
          return true;
        st.drained = self->make_response_promise();
        if (!st.core) {
          leave(self, "this node stopped");
          return st.drained;
        }
        st.draining = true;
        queue_pump(self);
        return st.drained;
      },
      [=](expose_atom, buffer& b) -> caf::result<std::uint64_t> {
        auto& st = self->state;
        auto peer = "peer " + st.ch->peer() + ": ";
        if (st.closed || !st.core)
          return make_error(errc::not_connected, peer + "connection not ready");
        if (b.empty())
          return make_error(errc::too_large, peer + "an empty buffer cannot be mapped");
        auto r = st.ch->map(b.data(), b.size());
        if (r.st != channels::status::ok)
          return make_error(errc::too_large, peer + "cannot map " + std::to_string(b.size()) +
                                                 " bytes: " + engine::to_string(r.st) +
                                                 " (channel.iomap_size?)");
        st.exposed[r.offset] = std::move(b);
        queue_pump(self);  // the peer learns of the map
        return r.offset;
      },
      [=](unexpose_atom, std::uint64_t offset) {
        auto& st = self->state;
        auto it = st.exposed.find(offset);
        if (it == st.exposed.end() || st.closed)
          return false;
        st.ch->unmap(offset);
        st.exposed.erase(it);
        queue_pump(self);
        return true;
      },
      [=](outbound_atom, outbound_message& m) -> caf::result<std::uint64_t> {
        auto& st = self->state;
        auto peer = "peer " + st.ch->peer() + ": ";
        if (st.closed)
          return make_error(errc::node_lost, peer + "connection closed");
        if (st.draining)
          return make_error(errc::stopped, peer + "this node is stopping");
        if (!st.core) {
          if (st.early.size() >= st.params.max_pending) {
            st.congested = true;
            return make_error(errc::congested, peer + "setup not finished, queue full");
          }
          st.early.push_back(std::move(m));
          return st.early.size();
        }
        switch (st.core->submit(std::move(m))) {
          case connection_core::submit_status::queued:
            queue_pump(self);
            return st.core->queue_depth();
          case connection_core::submit_status::congested:
            st.congested = true;
            return make_error(errc::congested, peer + std::to_string(st.params.max_pending) +
                                                   " messages already queued");
          case connection_core::submit_status::too_large: {
            const auto& t = st.setup->peer_terms();
            return make_error(errc::too_large, peer +
                                                   "message larger than the peer accepts (arena " +
                                                   std::to_string(t.arena_size) + " bytes, body " +
                                                   std::to_string(t.max_body) + " bytes, " +
                                                   std::to_string(t.max_buffers) + " buffers)");
          }
          case connection_core::submit_status::closed:
            break;
        }
        return make_error(errc::node_lost, peer + "connection closed: " + st.core->reason());
      },
  };
}

}  // namespace

caf::actor spawn_connection(caf::actor_system& sys, std::shared_ptr<channels::channel> ch,
                            progress_loop& loop, const connection_params& p, caf::actor owner) {
  return sys.spawn(connection, std::move(ch), &loop, p, std::move(owner));
}

}  // namespace riomesh::actors
