// The directory actor: the runtime's API, name lookups on peers, peers
// coming and going, and stopping. Messages go through the exchange.
#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/directory/directory.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/io/connection_actor.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/peers/recent_reasons.hpp>
#include <riomesh/actors/requests/pending_table.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>

#include <riomesh/buffer_inspect.hpp>
#include <riomesh/errc.hpp>
#include <riomesh/log.hpp>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <map>
#include <set>

namespace riomesh::actors {
namespace {

// What the node actor, the exchange and the directory's own timers tell it.
using directory_impl = directory_actor::extend_with<directory_events>::extend<
    caf::reacts_to<connected_atom, std::string, bool>,
    caf::reacts_to<closed_atom, std::string, std::string, bool>,
    caf::reacts_to<wrong_node_atom, std::string, std::string>,
    caf::reacts_to<writable_atom, std::string>, caf::reacts_to<timeout_atom, std::uint64_t>>;

using resolve_promise = caf::typed_response_promise<caf::strong_actor_ptr, std::string>;

struct directory_state {
  // remote_actor() asking a peer for a name.
  struct resolve_wait {
    resolve_promise rp;
    std::string name;
    bool sent = false;  // false: waiting for the peer to connect
  };

  directory_params params;
  std::shared_ptr<exchange> x;
  node_actor node;
  std::set<std::string> configured;
  std::set<std::string> connected;
  recent_reasons last_failure;  // why the peer is not connected
  pending_table<resolve_wait> resolves;
  std::map<std::string, std::vector<caf::actor>> writable_waiters;
  bool stopping = false;
  static const char* name;
};
const char* directory_state::name = "riomesh.directory";

using self_ptr = directory_impl::stateful_pointer<directory_state>;

const std::string& me(self_ptr self) {
  return self->state.params.node.connection.node_name;
}

caf::error not_connected(self_ptr self, const std::string& peer) {
  auto& st = self->state;
  auto* why = st.last_failure.of(peer);
  return make_error(errc::not_connected, "node '" + peer + "'" + (why ? ": " + *why : ""));
}

resolve_promise resolve(self_ptr self, const std::string& peer, const std::string& name,
                        std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto rp = self->make_response_promise<caf::strong_actor_ptr, std::string>();
  if (st.stopping)
    return rp.deliver(make_error(errc::stopped, "node '" + me(self) + "'"));
  if (peer == me(self)) {
    std::string interface;
    if (auto who = st.x->published(name, &interface))
      return rp.deliver(std::move(who), std::move(interface));
    return rp.deliver(
        make_error(errc::not_published, "no actor named '" + name + "' on node '" + peer + "'"));
  }
  bool up = st.connected.count(peer) > 0;
  if (!up && !st.configured.count(peer)) {
    // A node that dialed us and left is unknown again; why it left still
    // helps whoever asks.
    auto* why = st.last_failure.of(peer);
    return rp.deliver(
        make_error(errc::unknown_node,
                   "node '" + peer + "' is neither configured nor connected" +
                       (!why ? std::string{} : " (its last connection ended: " + *why + ")")));
  }
  auto id = st.resolves.add(peer, directory_state::resolve_wait{rp, name, false});
  if (up)
    st.resolves.find(id)->sent = st.x->ask_name(peer, id, name);
  self->delayed_send(self, timeout, timeout_atom::value, id);
  return rp;
}

void resolve_timed_out(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto* peer = st.resolves.peer_of(id);
  if (!peer)
    return;
  auto p = *peer;
  auto w = st.resolves.take(p, id);
  if (!w->sent)
    w->rp.deliver(not_connected(self, p));
  else
    w->rp.deliver(
        make_error(errc::timeout, "node '" + p + "' did not answer for '" + w->name + "' in time"));
}

void resolved(self_ptr self, const std::string& peer, std::uint64_t id, std::uint64_t actor,
              const std::string& interface) {
  auto& st = self->state;
  auto w = st.resolves.take(peer, id);
  if (!w)
    return;  // timed out meanwhile
  if (actor == 0) {
    w->rp.deliver(
        make_error(errc::not_published, "no actor named '" + w->name + "' on node '" + peer + "'"));
    return;
  }
  auto proxy = st.x->proxy_for(peer, actor);
  if (!proxy) {
    w->rp.deliver(make_error(errc::refused, "node '" + peer +
                                                "': too many of its actors known here "
                                                "at once for one more"));
    return;
  }
  w->rp.deliver(std::move(proxy), interface);
}

void on_connected(self_ptr self, const std::string& peer, bool authenticated) {
  auto& st = self->state;
  st.connected.insert(peer);
  st.last_failure.forget(peer);
  logging::info(me(self), {"peer_connected",
                           peer,
                           {{"authenticated", authenticated ? "yes" : "no"}},
                           "connected to node '" + peer + "'" +
                               (authenticated ? "" : " (unauthenticated: no secret)")});
  // Lookups that waited for this peer go out now.
  std::vector<std::pair<std::uint64_t, std::string>> due;
  st.resolves.for_each(peer, [&](std::uint64_t id, directory_state::resolve_wait& w) {
    if (!w.sent)
      due.emplace_back(id, w.name);
  });
  for (auto& [id, name] : due)
    st.resolves.find(id)->sent = st.x->ask_name(peer, id, name);
}

void fail_peer(self_ptr self, const std::string& peer, const caf::error& why) {
  auto& st = self->state;
  st.x->lose_peer(peer, why);
  for (auto& w : st.resolves.take_all(peer))
    w.rp.deliver(why);
  st.writable_waiters.erase(peer);
}

void on_closed(self_ptr self, const std::string& peer, const std::string& reason, bool stopped) {
  auto& st = self->state;
  st.last_failure.note(peer, reason);
  if (!st.connected.erase(peer)) {
    logging::debug(me(self),
                   {"dial_failed", peer, {{"reason", reason}}, "node '" + peer + "': " + reason});
    return;  // a dial that failed: waits for it keep waiting, up to their timeout
  }
  if (st.stopping)
    return logging::debug(
        me(self),
        {"peer_closed", peer, {{"reason", reason}}, "closed to node '" + peer + "': " + reason});
  // A peer that stopped is gone as surely as a lost one (what waited on it
  // fails the same way), but its leaving is expected: no warning.
  if (stopped)
    logging::info(me(self),
                  {"peer_left", peer, {{"reason", reason}}, "node '" + peer + "' left: " + reason});
  else
    logging::warn(me(self),
                  {"peer_lost", peer, {{"reason", reason}}, "lost node '" + peer + "': " + reason});
  fail_peer(self, peer, make_error(errc::node_lost, "node '" + peer + "': " + reason));
}

void on_writable(self_ptr self, const std::string& peer) {
  auto& st = self->state;
  st.x->drained(peer);
  auto it = st.writable_waiters.find(peer);
  if (it == st.writable_waiters.end())
    return;
  for (auto& who : it->second)
    caf::anon_send(who, writable_atom::value, peer);
  st.writable_waiters.erase(it);
}

void stop(self_ptr self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  st.stopping = true;
  auto why = make_error(errc::stopped, "node '" + me(self) + "' is stopping");
  st.x->lose_all(why);
  for (auto& w : st.resolves.take_all())
    w.rp.deliver(why);
  // The links send what they have queued, then shut down cleanly.
  auto limit = st.params.node.drain_limit + std::chrono::seconds(1);
  self->request(st.node, limit, stop_atom::value)
      .then([self](bool) { self->quit(); },
            [self](caf::error&) {
              self->send_exit(self->state.node, caf::exit_reason::user_shutdown);
              self->quit();
            });
}

caf::result<node_stats> stats(self_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<node_stats>();
  node_stats out;
  out.node = st.x->counters();
  out.request_latency = st.x->request_latency();
  if (const auto& m = st.params.node.channel.memory)
    out.memory = m->stats();
  self->request(st.node, std::chrono::seconds(10), stats_atom::value)
      .then(
          [rp, out](connection_list& list) mutable {
            for (auto& f : list) {
              if (f.routed)
                out.peers.emplace_back(f.peer, f.counters);
              out.connections.push_back({f.actor, f.peer, f.remote, f.phase, f.dialed});
            }
            rp.deliver(std::move(out));
          },
          [rp, out](caf::error&) mutable { rp.deliver(std::move(out)); });
  return rp;
}

directory_impl::behavior_type directory(self_ptr self, io_loop* loop, std::shared_ptr<exchange> x,
                                        directory_params p,
                                        std::shared_ptr<channels::listener> listener) {
  auto& st = self->state;
  st.params = p;
  st.x = std::move(x);
  for (auto& peer : p.node.peers)
    st.configured.insert(peer.name);
  // Before the node dials: what its first links report comes here.
  st.x->set_directory(caf::actor_cast<directory_events>(self));
  st.node = spawn_node(self->system(), *loop, st.x, p.node, caf::actor_cast<caf::actor>(self),
                       std::move(listener));
  self->set_exit_handler([=](caf::exit_msg&) { stop(self); });
  return {
      [=](dial_atom, const std::string& host, std::uint16_t port) -> caf::result<std::string> {
        if (self->state.stopping)
          return make_error(errc::stopped, "node '" + me(self) + "' is stopping");
        self->delegate(self->state.node, dial_atom::value, host, port);
        return caf::delegated<std::string>{};
      },
      [=](publish_atom, const std::string& name, caf::strong_actor_ptr& who,
          std::string& interface) {
        return self->state.x->publish(name, who, std::move(interface));
      },
      [=](unpublish_atom, const std::string& name) { return self->state.x->unpublish(name); },
      [=](resolve_atom, const std::string& peer, const std::string& name,
          std::chrono::milliseconds timeout) { return resolve(self, peer, name, timeout); },
      [=](resolved_atom, const std::string& peer, std::uint64_t id, std::uint64_t actor,
          const std::string& interface) { resolved(self, peer, id, actor, interface); },
      [=](timeout_atom, std::uint64_t id) { resolve_timed_out(self, id); },
      [=](notify_atom, const std::string& peer, caf::actor& who) {
        // Writable already (nothing refused since it last drained): say so.
        if (!self->state.x->congested(peer))
          return caf::anon_send(who, writable_atom::value, peer);
        self->state.writable_waiters[peer].push_back(std::move(who));
      },
      [=](stats_atom) { return stats(self); },
      [=](stop_atom) { stop(self); },
      [=](connected_atom, const std::string& peer, bool authenticated) {
        on_connected(self, peer, authenticated);
      },
      [=](closed_atom, const std::string& peer, const std::string& reason, bool stopped) {
        on_closed(self, peer, reason, stopped);
      },
      [=](writable_atom, const std::string& peer) { on_writable(self, peer); },
      // Unlike a dial that failed, which may work the next time, this
      // answer stays: what waits for the node fails now, not at its timeout.
      [=](wrong_node_atom, const std::string& peer, const std::string& reason) {
        if (!self->state.connected.count(peer))
          fail_peer(self, peer, make_error(errc::not_connected, "node '" + peer + "': " + reason));
      },
  };
}

}  // namespace

directory_actor spawn_directory(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                                const directory_params& p,
                                std::shared_ptr<channels::listener> listener) {
  return sys.spawn(directory, &loop, std::move(x), p, std::move(listener));
}

}  // namespace riomesh::actors
