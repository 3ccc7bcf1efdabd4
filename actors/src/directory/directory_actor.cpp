// The directory actor: its API, proxies, exported actors, peers coming and
// going, and stopping. The wire side is in directory_wire.cpp.
#include "directory_state.hpp"

#include <riomesh/actors/progress/progress_loop.hpp>

#include <riomesh/buffer_inspect.hpp>
#include <riomesh/errc.hpp>
#include <riomesh/log.hpp>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/mailbox_element.hpp>

namespace riomesh::actors {

const char* directory_state::name = "riomesh.directory";

namespace {

caf::error not_connected(directory_ptr self, const std::string& peer) {
  auto& st = self->state;
  auto it = st.last_failure.find(peer);
  return make_error(errc::not_connected,
                    "node '" + peer + "'" + (it == st.last_failure.end() ? "" : ": " + it->second));
}

void resolve(directory_ptr self, const std::string& peer, const std::string& name,
             std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  if (st.stopping)
    return (void)rp.deliver(make_error(errc::stopped, "node '" + me(self) + "'"));
  if (peer == me(self)) {
    if (auto* p = st.exports.published(name))
      return (void)rp.deliver(p->handle, p->interface);
    return (void)rp.deliver(
        make_error(errc::not_published, "no actor named '" + name + "' on node '" + peer + "'"));
  }
  bool up = st.connected.count(peer) > 0;
  if (!up && !st.configured.count(peer)) {
    // A node that dialed us and left is unknown again; why it left still
    // helps whoever asks.
    auto why = st.last_failure.find(peer);
    return (void)rp.deliver(make_error(
        errc::unknown_node,
        "node '" + peer + "' is neither configured nor connected" +
            (why == st.last_failure.end() ? std::string{}
                                          : " (its last connection ended: " + why->second + ")")));
  }
  auto id = st.resolves.add(peer, directory_state::resolve_wait{rp, name, up});
  if (up)
    send_resolve(self, peer, id, name);
  self->delayed_send(self, timeout, timeout_atom::value, id);
}

void resolve_timed_out(directory_ptr self, std::uint64_t id) {
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

void on_connected(directory_ptr self, const std::string& peer, bool authenticated) {
  auto& st = self->state;
  st.connected.insert(peer);
  st.last_failure.erase(peer);
  logging::info(me(self), "connected to node '" + peer + "'" +
                              (authenticated ? "" : " (unauthenticated: no secret)"));
  // Lookups that waited for this peer go out now.
  std::vector<std::pair<std::uint64_t, std::string>> due;
  st.resolves.for_each(peer, [&](std::uint64_t id, directory_state::resolve_wait& w) {
    if (!w.sent) {
      w.sent = true;
      due.emplace_back(id, w.name);
    }
  });
  for (auto& [id, name] : due)
    send_resolve(self, peer, id, name);
}

void fail_peer(directory_ptr self, const std::string& peer, const caf::error& why) {
  auto& st = self->state;
  std::vector<caf::strong_actor_ptr> doomed;
  for (auto it = st.proxies.lower_bound({peer, 0});
       it != st.proxies.end() && it->first.first == peer;) {
    doomed.push_back(std::move(it->second));
    it = st.proxies.erase(it);
  }
  for (auto& p : doomed)
    static_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(p))
        ->kill_proxy(self->context(), why);
  for (auto& w : st.requests.take_all(peer))
    fail_request(self, w, why);
  for (auto& w : st.resolves.take_all(peer))
    w.rp.deliver(why);
  st.exports.forget_peer(peer);
  st.writable_waiters.erase(peer);
}

void on_closed(directory_ptr self, const std::string& peer, const std::string& reason,
               bool stopped) {
  auto& st = self->state;
  st.last_failure[peer] = reason;
  if (!st.connected.erase(peer)) {
    logging::debug(me(self), "node '" + peer + "': " + reason);
    return;  // a dial that failed: waits for it keep waiting, up to their timeout
  }
  if (st.stopping)
    return logging::debug(me(self), "closed to node '" + peer + "': " + reason);
  // A peer that stopped is gone as surely as a lost one (what waited on it
  // fails the same way), but its leaving is expected: no warning.
  if (stopped)
    logging::info(me(self), "node '" + peer + "' left: " + reason);
  else
    logging::warn(me(self), "lost node '" + peer + "': " + reason);
  fail_peer(self, peer, make_error(errc::node_lost, "node '" + peer + "': " + reason));
}

void on_writable(directory_ptr self, const std::string& peer) {
  auto& st = self->state;
  st.congested.erase(peer);
  auto it = st.writable_waiters.find(peer);
  if (it == st.writable_waiters.end())
    return;
  for (auto& who : it->second)
    self->send(who, writable_atom::value, peer);
  st.writable_waiters.erase(it);
}

void stop(directory_ptr self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  st.stopping = true;
  auto why = make_error(errc::stopped, "node '" + me(self) + "' is stopping");
  std::set<std::string> peers;
  for (auto& [key, p] : st.proxies)
    peers.insert(key.first);
  for (auto& p : st.connected)
    peers.insert(p);
  for (auto& p : peers)
    fail_peer(self, p, why);
  for (auto& w : st.requests.take_all())
    fail_request(self, w, why);
  for (auto& w : st.resolves.take_all())
    w.rp.deliver(why);
  // The connections send what they have queued, then shut down cleanly.
  auto limit = st.params.node.drain_limit + std::chrono::seconds(1);
  self->request(st.node, limit, stop_atom::value)
      .then([self](bool) { self->quit(); },
            [self](caf::error&) {
              self->send_exit(self->state.node, caf::exit_reason::user_shutdown);
              self->quit();
            });
}

caf::result<node_stats> stats(directory_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<node_stats>();
  node_stats out;
  out.node = st.counters;
  out.node.proxies = st.proxies.size();
  out.node.exported = st.exports.exported();
  out.node.published = st.exports.names().size();
  self->request(st.node, std::chrono::seconds(10), stats_atom::value)
      .then(
          [rp, out](peer_counters& peers) mutable {
            out.peers = std::move(peers);
            rp.deliver(std::move(out));
          },
          [rp, out](caf::error&) mutable { rp.deliver(std::move(out)); });
  return rp;
}

caf::behavior directory(directory_ptr self, progress_loop* loop, directory_params p,
                        std::shared_ptr<channels::listener> listener) {
  auto& st = self->state;
  st.params = p;
  for (auto& peer : p.node.peers)
    st.configured.insert(peer.name);
  st.node = spawn_node(self->system(), *loop, p.node, caf::actor_cast<caf::actor>(self),
                       std::move(listener));
  self->set_down_handler([=](caf::down_msg& dm) {
    auto id = dm.source.id();
    auto reason = self->system().render(dm.reason);
    for (auto& peer : self->state.exports.exited(id))
      if (self->state.connected.count(peer))
        send_down(self, peer, id, reason);
  });
  self->set_exit_handler([=](caf::exit_msg&) { stop(self); });
  return {
      [=](publish_atom, const std::string& name, caf::strong_actor_ptr& who,
          std::string& interface) {
        if (!who)
          return false;
        auto& st = self->state;
        st.exports.publish(name, who->id(), who, caf::actor_cast<caf::weak_actor_ptr>(who),
                           std::move(interface));
        self->monitor(who);
        st.exports.watched(who->id());
        return true;
      },
      [=](publish_atom, const std::string& name) { return self->state.exports.unpublish(name); },
      [=](resolve_atom, const std::string& peer, const std::string& name,
          std::chrono::milliseconds timeout) { resolve(self, peer, name, timeout); },
      [=](timeout_atom, std::uint64_t id) { resolve_timed_out(self, id); },
      [=](notify_atom, const std::string& peer, caf::actor& who) {
        // Writable already (nothing refused since it last drained): say so.
        if (!self->state.congested.count(peer))
          return self->send(who, writable_atom::value, peer);
        self->state.writable_waiters[peer].push_back(std::move(who));
      },
      [=](stats_atom) { return stats(self); },
      [=](expose_atom, const std::string& peer, buffer& b) {
        return self->delegate(self->state.node, expose_atom::value, peer, std::move(b));
      },
      [=](unexpose_atom, const std::string& peer, std::uint64_t offset) {
        return self->delegate(self->state.node, unexpose_atom::value, peer, offset);
      },
      [=](place_atom, const std::string& peer, std::uint64_t offset, buffer& data,
          caf::strong_actor_ptr& notify) { place(self, peer, offset, std::move(data), notify); },
      [=](stop_atom) { stop(self); },
      [=](forward_atom, forwarded& f) {
        if (self->state.stopping) {
          caf::error why = make_error(errc::stopped, "node '" + me(self) + "' is stopping");
          if (f.mid.is_request() && f.sender)
            f.sender->enqueue(f.proxy, f.mid.response_id(), caf::make_message(why),
                              self->context());
          return;
        }
        forward(self, f);
      },
      [=](route_atom, const std::string& peer, caf::actor& conn) {
        if (conn)
          self->state.routes[peer] = std::move(conn);
        else
          self->state.routes.erase(peer);
      },
      [=](connected_atom, const std::string& peer, bool authenticated) {
        on_connected(self, peer, authenticated);
      },
      [=](closed_atom, const std::string& peer, const std::string& reason, bool stopped) {
        on_closed(self, peer, reason, stopped);
      },
      [=](inbound_atom, const std::string& peer, inbound_message& m) { on_inbound(self, peer, m); },
      [=](writable_atom, const std::string& peer) { on_writable(self, peer); },
  };
}

}  // namespace

caf::strong_actor_ptr proxy_for(directory_ptr self, const std::string& peer, std::uint64_t id) {
  auto& slot = self->state.proxies[{peer, id}];
  if (!slot)
    slot = make_remote_proxy(self->system(), caf::actor_cast<caf::actor>(self), peer, id);
  return slot;
}

void kill_proxy(directory_ptr self, const std::string& peer, std::uint64_t id,
                const caf::error& why) {
  auto& st = self->state;
  auto it = st.proxies.find({peer, id});
  if (it == st.proxies.end())
    return;
  auto p = std::move(it->second);
  st.proxies.erase(it);
  if (p)
    static_cast<remote_proxy*>(caf::actor_cast<caf::abstract_actor*>(p))
        ->kill_proxy(self->context(), why);
}

void watch_export(directory_ptr self, const caf::strong_actor_ptr& who, const std::string& peer) {
  auto& st = self->state;
  if (st.exports.learn(who->id(), caf::actor_cast<caf::weak_actor_ptr>(who), peer)) {
    self->monitor(who);
    st.exports.watched(who->id());
  }
}

void fail_request(directory_ptr self, const directory_state::request_wait& w, caf::error why) {
  if (w.requester)
    w.requester->enqueue(w.proxy, w.mid.response_id(), caf::make_message(std::move(why)),
                         self->context());
}

caf::actor spawn_directory(caf::actor_system& sys, progress_loop& loop, const directory_params& p,
                           std::shared_ptr<channels::listener> listener) {
  return sys.spawn(directory, &loop, p, std::move(listener));
}

}  // namespace riomesh::actors
