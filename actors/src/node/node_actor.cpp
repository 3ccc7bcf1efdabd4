#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/node/node_actor.hpp>
#include <riomesh/actors/progress/progress_loop.hpp>
#include <riomesh/buffer_inspect.hpp>
#include <riomesh/config/address.hpp>
#include <riomesh/errc.hpp>
#include <riomesh/log.hpp>

#include <caf/actor_system.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <map>
#include <stdexcept>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<riomesh::channels::channel>)

namespace riomesh::actors {
namespace {

using clock = redial_schedule::clock;

struct node_state {
  struct link {
    caf::actor conn;
    std::string peer;  // expected (dialed) or learned (connected)
    bool dialed = false;
    bool up = false;
    // Accepted links in setup: where from, and in which order they came.
    std::string from;
    std::uint64_t accepted = 0;
    bool evicted = false;  // told to go; no longer counts as in setup
    std::uint64_t incarnation = 0;  // the peer's run, once up
  };

  node_params params;
  progress_loop* loop = nullptr;
  caf::actor owner;
  std::shared_ptr<channels::listener> listener;
  std::unique_ptr<redial_schedule> redial;
  std::shared_ptr<session_registry> sessions = std::make_shared<session_registry>();
  std::map<caf::actor_addr, link> links;
  std::map<std::string, caf::actor> by_peer;  // connected
  std::map<std::string, config::endpoint> configured;
  struct loss {
    std::string reason;
    bool stopped = false;  // it left in order
    std::uint64_t incarnation = 0;
  };
  std::map<std::string, loss> pending_loss;  // within loss_grace
  bool timer_set = false;
  bool stopping = false;      // draining: no dials, no new connections
  std::size_t in_setup = 0;   // accepted links not up yet
  std::uint64_t accepts = 0;  // accepted so far, for their order
  std::uint64_t evicted = 0;  // in setup, made room for newer ones (this flood)

  ~node_state() {
    if (listener)
      loop->unwatch(listener->fd());
  }
  static const char* name;
};
const char* node_state::name = "riomesh.node";

using self_ptr = caf::stateful_actor<node_state>*;

connection_params connection_for(const node_params& p) {
  auto c = p.connection;
  // Without proofs, only on loopback or when the config says insecure.
  c.allow_unauthenticated = c.creds.secret.empty() && c.creds.trusted.empty() &&
                            (p.insecure || config::is_loopback(p.listen));
  return c;
}

// "10.0.0.1" of "10.0.0.1:4242", "::1" of "[::1]:4242".
std::string host_of(const std::string& peer) {
  auto colon = peer.rfind(':');
  auto host = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return host;
}

void adopt(self_ptr self, std::shared_ptr<channels::channel> ch, const std::string& expected,
           bool dialed) {
  auto& st = self->state;
  auto from = dialed ? std::string{} : host_of(ch->peer());
  auto params = connection_for(st.params);
  params.sessions = st.sessions;
  params.dialed = dialed;
  auto conn = spawn_connection(self->system(), std::move(ch), *st.loop, params,
                               caf::actor_cast<caf::actor>(self));
  node_state::link l;
  l.conn = conn;
  l.peer = expected;
  l.dialed = dialed;
  if (!dialed) {
    ++st.in_setup;
    l.from = std::move(from);
    l.accepted = ++st.accepts;
  }
  st.links[conn.address()] = std::move(l);
}

bool in_setup(const node_state::link& l) {
  return !l.dialed && !l.up && !l.evicted;
}

// An accepted link leaves setup: up, evicted, or gone.
void setup_ended(self_ptr self, const node_state::link& l) {
  auto& st = self->state;
  if (in_setup(l) && st.in_setup > 0)
    --st.in_setup;
  if (st.evicted > 0 && st.in_setup < st.params.max_in_setup / 4) {
    logging::warn(st.params.connection.node_name,
                  "the flood of connections is over: " + std::to_string(st.evicted) +
                      " that did not set up their session in time were closed for newer ones");
    st.evicted = 0;
  }
}

// Room for a new connection from `host`: when that address holds half the
// setup slots, or all slots are taken, the oldest connection still setting
// up (of that address first) goes. A client that completes its handshake
// promptly gets in whatever holds the rest; one that never does is pushed
// out by the next arrivals instead of locking them out.
void make_room(self_ptr self, const std::string& host) {
  auto& st = self->state;
  std::size_t from_host = 0;
  for (auto& [addr, l] : st.links)
    from_host += in_setup(l) && l.from == host;
  bool host_full = from_host >= std::max<std::size_t>(1, st.params.max_in_setup / 2);
  if (!host_full && st.in_setup < st.params.max_in_setup)
    return;
  node_state::link* oldest = nullptr;
  for (auto& [addr, l] : st.links)
    if (in_setup(l) && (!host_full || l.from == host) && (!oldest || l.accepted < oldest->accepted))
      oldest = &l;
  if (!oldest)
    return;
  setup_ended(self, *oldest);
  oldest->evicted = true;
  // Said once per flood, not once per connection.
  if (st.evicted++ == 0)
    logging::warn(st.params.connection.node_name,
                  "too many connections setting up their session (" +
                      std::to_string(st.in_setup + 1) + ", " + std::to_string(from_host) +
                      " from " + host + "): closing the oldest ones to let new ones in");
  self->send(oldest->conn, stop_atom::value,
             "closed for a newer connection: " + std::to_string(st.params.max_in_setup) +
                 " were setting up their session (" + host + " had " + std::to_string(from_host) +
                 ")");
}

void schedule_redial(self_ptr self) {
  auto& st = self->state;
  auto now = clock::now();
  if (auto next = st.redial->next(now); next && !st.timer_set) {
    st.timer_set = true;
    self->delayed_send(self, std::max(*next - now, clock::duration::zero()), redial_atom::value);
  }
}

// The arguments go through spawn, not a capture: CAF 0.17 binds a null
// reference for a function actor spawned without arguments (UBSan sees it).
void dial(caf::blocking_actor*, caf::actor node, std::string peer, config::endpoint to,
          channels::channel_options opt) {
  std::string error;
  std::shared_ptr<channels::channel> ch = channels::connect(to, opt, error);
  caf::anon_send(node, dialed_atom::value, peer, ch, error);
}

void dial_due(self_ptr self) {
  auto& st = self->state;
  st.timer_set = false;
  if (st.stopping)
    return;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto now = clock::now();
  for (const auto& peer : st.redial->due(now)) {
    if (st.by_peer.count(peer)) {  // it dialed us meanwhile
      st.redial->connected(peer, now);
      continue;
    }
    auto to = st.configured[peer];
    auto opt = st.params.channel;
    // Connecting blocks (address resolution, the handshake of the fabric):
    // never in a scheduled actor. A blocking actor has its own thread.
    self->system().spawn(dial, me, peer, to, opt);
  }
  schedule_redial(self);
}

void lost(self_ptr self, const std::string& peer, const std::string& reason, bool stopped = false) {
  auto& st = self->state;
  if (st.by_peer.count(peer))
    return;  // still connected, through the connection that was kept
  self->send(st.owner, closed_atom::value, peer, reason, stopped);
  if (st.configured.count(peer)) {
    st.redial->failed(peer, clock::now());
    schedule_redial(self);
  }
}

void drop_link(self_ptr self, const caf::actor_addr& conn) {
  auto& st = self->state;
  auto it = st.links.find(conn);
  if (it == st.links.end())
    return;
  if (it->second.up) {
    auto p = st.by_peer.find(it->second.peer);
    if (p != st.by_peer.end() && p->second.address() == conn) {
      st.by_peer.erase(p);
      self->send(st.owner, route_atom::value, it->second.peer, caf::actor{});
    }
  }
  setup_ended(self, it->second);
  self->send_exit(it->second.conn, caf::exit_reason::user_shutdown);
  st.links.erase(it);
}

void on_connected(self_ptr self, const std::string& name, bool authenticated, bool replaces,
                  std::uint64_t incarnation) {
  auto& st = self->state;
  auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  auto it = st.links.find(from);
  if (it == st.links.end())
    return;
  auto& l = it->second;
  if (l.dialed && name != l.peer) {
    auto expected = l.peer;
    drop_link(self, from);
    return lost(self, expected,
                "expected node '" + expected + "' at " +
                    config::to_string(st.configured[expected]) + ", found node '" + name + "'");
  }
  // Back within the grace of a loss not yet reported: for the owner it never
  // went away, unless this is a new run of the node, whose actors are not
  // the old one's.
  bool already = false;
  if (auto pending = st.pending_loss.find(name); pending != st.pending_loss.end()) {
    if (pending->second.incarnation == incarnation)
      already = true;
    else
      self->send(st.owner, closed_atom::value, name, pending->second.reason,
                 pending->second.stopped);
    st.pending_loss.erase(pending);
  }
  if (auto other = st.by_peer.find(name); other != st.by_peer.end()) {
    auto& old = st.links[other->second.address()];
    if (replaces) {
      // Its key proves it: the node restarted, and its old session is dead.
      logging::info(st.params.connection.node_name,
                    "node '" + name + "' restarted (its node key proves it): its new session " +
                        "replaces the old one");
      drop_link(self, old.conn.address());
      // For the owner the old node is gone: what waited on it fails.
      self->send(st.owner, closed_atom::value, name,
                 std::string{"it restarted, and its new session replaced the old one"}, true);
    } else {
      // Both dialed at once: keep the connection the smaller name dialed.
      bool mine_dialed_by_smaller = l.dialed == (st.params.connection.node_name < name);
      if (!mine_dialed_by_smaller) {
        drop_link(self, from);
        return;
      }
      drop_link(self, old.conn.address());
      already = true;  // the owner saw it connected: nothing changed for it
    }
  }
  l.peer = name;
  l.incarnation = incarnation;
  setup_ended(self, l);
  l.up = true;
  st.by_peer[name] = l.conn;
  // From here the owner and the connection talk directly; both hear it
  // before the owner hears of the peer.
  self->send(l.conn, route_atom::value, st.owner);
  self->send(st.owner, route_atom::value, name, l.conn);
  if (st.configured.count(name))
    st.redial->connected(name, clock::now());
  if (!already)
    self->send(st.owner, connected_atom::value, name, authenticated);
}

void on_closed(self_ptr self, const std::string& reason, bool stopped) {
  auto& st = self->state;
  auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  auto it = st.links.find(from);
  if (it == st.links.end())
    return;
  auto l = it->second;
  drop_link(self, from);
  if (!l.up)  // refused before any memory was exposed: say so, on both sides
    logging::warn(self->state.params.connection.node_name,
                  (l.dialed ? "connection to node '" + l.peer + "'" : std::string{"a connection"}) +
                      " failed during setup: " + reason);
  if (l.up) {
    self->state.pending_loss[l.peer] = {reason, stopped, l.incarnation};
    self->delayed_send(self, self->state.params.loss_grace, loss_atom::value, l.peer);
  } else if (l.dialed) {
    lost(self, l.peer, reason);
  }
}

// Asks every connection for its counters; answers when all have (a
// connection that closes meanwhile is left out).
caf::result<peer_counters> gather_stats(self_ptr self) {
  struct gathering {
    caf::typed_response_promise<peer_counters> rp;
    peer_counters out;
    std::size_t left = 0;
    void one_done() {
      if (--left == 0)
        rp.deliver(std::move(out));
    }
  };
  auto& st = self->state;
  if (st.by_peer.empty())
    return peer_counters{};
  auto g = std::make_shared<gathering>();
  g->rp = self->make_response_promise<peer_counters>();
  g->left = st.by_peer.size();
  for (auto& [peer, conn] : st.by_peer)
    self->request(conn, std::chrono::seconds(5), stats_atom::value)
        .then(
            [g, peer = peer](connection_core::counters& c) {
              g->out.emplace_back(peer, c);
              g->one_done();
            },
            [g](caf::error&) { g->one_done(); });
  return g->rp;
}

// Every connection drains (bounded by `drain_limit`), then the node quits;
// answered when it has.
caf::result<bool> drain(self_ptr self) {
  struct draining {
    caf::response_promise rp;
    self_ptr self;
    std::size_t left = 0;
    void one_done() {
      if (--left == 0) {
        for (auto& [addr, l] : self->state.links)  // those that outlasted the limit
          self->send_exit(l.conn, caf::exit_reason::user_shutdown);
        self->state.links.clear();
        rp.deliver(true);
        self->quit();
      }
    }
  };
  auto& st = self->state;
  st.stopping = true;
  auto d = std::make_shared<draining>();
  d->rp = self->make_response_promise();
  d->self = self;
  d->left = st.links.size() + 1;
  for (auto& [addr, l] : st.links)
    self->request(l.conn, st.params.drain_limit, stop_atom::value)
        .then([d](bool) { d->one_done(); }, [d](caf::error&) { d->one_done(); });
  d->one_done();
  return d->rp;
}

caf::behavior node(self_ptr self, progress_loop* loop, node_params p, caf::actor owner,
                   std::shared_ptr<channels::listener> listener) {
  auto& st = self->state;
  st.params = p;
  st.loop = loop;
  st.owner = std::move(owner);
  st.listener = std::move(listener);
  st.redial = std::make_unique<redial_schedule>(p.redial, std::random_device{}());
  caf::actor_addr me = self->address();
  loop->watch(st.listener->fd(), [me] {
    if (auto a = caf::actor_cast<caf::actor>(me))
      caf::anon_send(a, accept_atom::value);
  });
  auto now = clock::now();
  for (const auto& peer : p.peers) {
    st.configured[peer.name] = peer.address;
    st.redial->add(peer.name, now);
  }
  if (!p.peers.empty())
    self->send(self, redial_atom::value);
  self->set_exit_handler([=](caf::exit_msg& msg) {
    for (auto& [addr, l] : self->state.links)
      self->send_exit(l.conn, msg.reason);
    self->state.links.clear();
    self->quit(msg.reason);
  });
  return {
      [=](accept_atom) {
        auto& st = self->state;
        for (;;) {
          if (st.stopping) {
            std::string peer;
            if (!st.listener->refuse(peer))
              break;
            continue;
          }
          std::string error;
          std::shared_ptr<channels::channel> ch =
              st.listener->accept(std::chrono::milliseconds(0), error);
          if (!ch)
            break;
          make_room(self, host_of(ch->peer()));
          adopt(self, std::move(ch), "", false);
        }
        st.loop->rearm(st.listener->fd());
      },
      [=](redial_atom) { dial_due(self); },
      [=](loss_atom, const std::string& peer) {
        auto& st = self->state;
        auto it = st.pending_loss.find(peer);
        if (it == st.pending_loss.end())
          return;
        auto loss = it->second;
        st.pending_loss.erase(it);
        lost(self, peer, loss.reason, loss.stopped);  // unless it is connected again by now
      },
      [=](dialed_atom, const std::string& peer, std::shared_ptr<channels::channel>& ch,
          const std::string& error) {
        if (ch && !self->state.stopping)
          adopt(self, std::move(ch), peer, true);
        else
          lost(self, peer, "cannot connect: " + error);
      },
      [=](connected_atom, const std::string& name, bool authenticated, bool replaces,
          std::uint64_t incarnation) { on_connected(self, name, authenticated, replaces, incarnation);
      },
      [=](closed_atom, const std::string& reason, bool stopped) {
        on_closed(self, reason, stopped);
      },
      [=](writable_atom) {
        auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
        auto it = self->state.links.find(from);
        if (it != self->state.links.end() && it->second.up)
          self->send(self->state.owner, writable_atom::value, it->second.peer);
      },
      [=](stop_atom) -> caf::result<bool> { return drain(self); },
      [=](stats_atom) -> caf::result<peer_counters> { return gather_stats(self); },
      [=](outbound_atom, const std::string& peer,
          outbound_message& m) -> caf::result<std::uint64_t> {
        auto& st = self->state;
        auto it = st.by_peer.find(peer);
        if (it == st.by_peer.end())
          return st.configured.count(peer) ? make_error(errc::not_connected, "node '" + peer + "'")
                                           : make_error(errc::unknown_node, "node '" + peer + "'");
        // The connection answers the requester directly.
        self->delegate(it->second, outbound_atom::value, std::move(m));
        return caf::delegated<std::uint64_t>{};
      },
      [=](expose_atom, const std::string& peer, buffer& b) -> caf::result<std::uint64_t> {
        auto it = self->state.by_peer.find(peer);
        if (it == self->state.by_peer.end())
          return make_error(errc::not_connected, "node '" + peer + "'");
        self->delegate(it->second, expose_atom::value, std::move(b));
        return caf::delegated<std::uint64_t>{};
      },
      [=](unexpose_atom, const std::string& peer, std::uint64_t offset) -> caf::result<bool> {
        auto it = self->state.by_peer.find(peer);
        if (it == self->state.by_peer.end())
          return false;
        self->delegate(it->second, unexpose_atom::value, offset);
        return caf::delegated<bool>{};
      },
      [=](port_atom) { return self->state.listener->port(); },
  };
}

}  // namespace

caf::actor spawn_node(caf::actor_system& sys, progress_loop& loop, const node_params& p,
                      caf::actor owner) {
  std::string error;
  std::shared_ptr<channels::listener> l = channels::listen(p.listen, p.channel, error);
  if (!l)
    throw std::runtime_error(error);
  return spawn_node(sys, loop, p, std::move(owner), std::move(l));
}

caf::actor spawn_node(caf::actor_system& sys, progress_loop& loop, const node_params& p,
                      caf::actor owner, std::shared_ptr<channels::listener> listener) {
  return sys.spawn(node, &loop, p, std::move(owner), std::move(listener));
}

}  // namespace riomesh::actors
