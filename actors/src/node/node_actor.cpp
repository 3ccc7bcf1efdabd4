#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/io/connection_actor.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/actors/node/admission.hpp>
#include <riomesh/actors/node/node_actor.hpp>
#include <riomesh/actors/node/seeds.hpp>
#include <riomesh/actors/peers/node_table.hpp>
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
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<riomesh::channels::channel>)

namespace riomesh::actors {
namespace {

using clock = redial_schedule::clock;

// What a dial thread tells the node: a channel to the peer, or why not.
struct peer_dialed {
  std::string peer;
  std::shared_ptr<channels::channel> ch;
  std::string error;
};
// The same for a dial by address, under the key of whoever waits for it.
struct address_dialed {
  std::uint64_t key = 0;
  std::shared_ptr<channels::channel> ch;
  std::string error;
};
// What the seeds' names resolved to (seeds.hpp).
struct seeds_resolved {
  seed_addresses addresses;
};

}  // namespace
}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::peer_dialed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::address_dialed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::seeds_resolved)

namespace riomesh::actors {
namespace {

// What the node hears besides its interface: from the listener's watch,
// its dial threads, its timers, and the exchange (links set up, closed,
// writable again; a node a peer named).
using node_impl = node_actor::extend_with<node_events>::extend<
    caf::reacts_to<accept_atom>, caf::reacts_to<redial_atom>,
    caf::reacts_to<loss_atom, std::string>, caf::reacts_to<peer_dialed>,
    caf::reacts_to<address_dialed>, caf::reacts_to<timeout_atom>, caf::reacts_to<seed_atom>,
    caf::reacts_to<seeds_resolved>>;

constexpr double learned_dial_burst = 16;

struct node_state {
  struct entry {
    std::shared_ptr<link> l;  // for its facts, once up
    connection_actor conn;
    std::string peer;  // expected (dialed) or learned (up)
    bool dialed = false;
    bool up = false;
    std::uint64_t incarnation = 0;  // the peer's run, once up
    std::uint64_t dial_key = 0;     // dialed by address (dial_atom): who waits
  };
  // A dial by address, of a node whose name it tells once connected.
  struct address_dial {
    config::endpoint to;
    std::vector<caf::typed_response_promise<std::string>> waiting;
  };
  struct loss {
    std::string reason;
    bool stopped = false;  // it left in order
    std::uint64_t incarnation = 0;
  };

  node_params params;
  io_loop* loop = nullptr;
  std::shared_ptr<exchange> x;
  caf::actor owner;
  std::shared_ptr<channels::listener> listener;
  std::unique_ptr<redial_schedule> redial;
  std::shared_ptr<session_registry> sessions;
  std::unique_ptr<admission> admitting;
  std::map<std::uint64_t, entry> links;          // by link id
  std::map<std::string, std::uint64_t> by_peer;  // the link kept to each peer
  std::map<std::string, config::endpoint> configured;
  std::map<std::string, loss> pending_loss;  // within loss_grace
  std::uint64_t next_link = 1;
  std::uint64_t evicted = 0;  // made room for newer ones, this flood
  bool timer_set = false;
  bool stopping = false;
  caf::typed_response_promise<bool> drained;
  std::uint64_t next_key = 1;
  std::map<std::uint64_t, address_dial> address_dials;
  // Nodes peers named (the node of a handle they sent), dialed once each
  // time they are named, never redialed; bounded in number and rate.
  std::set<std::string> learned;
  double dial_tokens = learned_dial_burst;
  clock::time_point tokens_at = clock::now();
  std::uint64_t learned_refused = 0;
  // Seed addresses that turned out to be this node, or a node that refused
  // to be dialed there for what it is: not dialed again. Bounded by
  // max_seed_addresses.
  std::set<std::string> not_seeds;
  std::string seed_problems;  // the last ones said, to say a change once

  ~node_state() {
    if (listener)
      loop->unwatch(listener->fd());
  }
  static const char* name;
};
const char* node_state::name = "riomesh.node";

using self_ptr = node_impl::stateful_pointer<node_state>;

// What all seeds may resolve to, at most: the nodes dialed for them.
constexpr std::size_t max_seed_addresses = 256;

// Dials peers cause: at most this many nodes at once, started at most this
// often (a burst, then a steady rate).
constexpr std::size_t max_learned = 64;
constexpr double learned_dials_per_second = 10;

const std::string& me(self_ptr self) {
  return self->state.params.connection.node_name;
}

// "10.0.0.1" of "10.0.0.1:4242", "::1" of "[::1]:4242".
std::string host_of(const std::string& peer) {
  auto colon = peer.rfind(':');
  auto host = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return host;
}

connection_params connection_for(const node_params& p) {
  auto c = p.connection;
  const auto& creds = c.tls->creds();
  // Without proofs, only on loopback or when the config says insecure.
  c.allow_unauthenticated = creds.secret.empty() && creds.trusted.empty() &&
                            (p.insecure || config::is_loopback(p.listen));
  return c;
}

void adopt(self_ptr self, std::shared_ptr<channels::channel> ch, const std::string& expected,
           bool dialed, std::uint64_t dial_key = 0) {
  auto& st = self->state;
  auto params = connection_for(st.params);
  params.sessions = st.sessions;
  params.dialed = dialed;
  params.expected = dialed ? expected : std::string{};
  params.encrypt = st.params.encrypt == config::encryption::on ||
                   (st.params.encrypt == config::encryption::automatic && ch->guard() != nullptr &&
                    !config::is_loopback(config::endpoint{host_of(ch->peer()), 0}));
  auto id = st.next_link++;
  if (!dialed)
    st.admitting->accepted(id, host_of(ch->peer()));
  auto l = std::make_shared<link>(id, std::move(ch), params, *st.loop, st.x);
  auto conn = spawn_connection(self->system(), *st.params.connections, l);
  st.links[id] = node_state::entry{l, conn, expected, dialed, false, 0, dial_key};
  st.loop->adopt(std::move(l));
}

// An accepted link leaves setup: up, evicted, or gone.
void setup_ended(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  st.admitting->left(id);
  if (st.evicted > 0 && st.admitting->in_setup() < st.admitting->max() / 4) {
    logging::warn(me(self), {"connection_flood_over",
                             "",
                             {{"evicted", std::uint64_t{st.evicted}}},
                             "the flood of connections is over: " + std::to_string(st.evicted) +
                                 " that did not set up their session in time were closed for "
                                 "newer ones"});
    st.evicted = 0;
  }
}

void make_room(self_ptr self, const std::string& host) {
  auto& st = self->state;
  auto victim = st.admitting->make_room(host);
  if (!victim)
    return;
  auto from_host = st.admitting->from(host);
  setup_ended(self, *victim);
  // Said once per flood, not once per connection.
  if (st.evicted++ == 0)
    logging::warn(me(self), {"connection_flood",
                             "",
                             {{"in_setup", std::uint64_t{st.admitting->in_setup() + 1}},
                              {"host", host},
                              {"from_host", std::uint64_t{from_host}}},
                             "too many connections setting up their session (" +
                                 std::to_string(st.admitting->in_setup() + 1) + ", " +
                                 std::to_string(from_host) + " from " + host +
                                 "): closing the oldest ones to let new ones in"});
  auto it = st.links.find(*victim);
  if (it == st.links.end())
    return;
  auto why = "closed for a newer connection: " + std::to_string(st.admitting->max()) +
             " were setting up their session (" + host + " had " + std::to_string(from_host) + ")";
  self->send(it->second.conn, evict_atom::value, why);
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
  caf::anon_send(node, peer_dialed{std::move(peer), std::move(ch), std::move(error)});
}

// A dial by address: its outcome comes back under its key.
void dial_address(caf::blocking_actor*, caf::actor node, std::uint64_t key, config::endpoint to,
                  channels::channel_options opt) {
  std::string error;
  std::shared_ptr<channels::channel> ch = channels::connect(to, opt, error);
  caf::anon_send(node, address_dialed{key, std::move(ch), std::move(error)});
}

// Resolving blocks: a thread of its own, as a dial has.
void resolve_seeds_on(caf::blocking_actor*, caf::actor node, std::vector<config::endpoint> seeds,
                      seed_resolver resolve) {
  caf::anon_send(node, seeds_resolved{resolve_seeds(seeds, resolve, max_seed_addresses)});
}

// The outcome of a dial by address, for whoever asked.
void address_dial_ended(self_ptr self, std::uint64_t key, const caf::error& e,
                        const std::string& name) {
  auto& st = self->state;
  auto it = st.address_dials.find(key);
  if (it == st.address_dials.end())
    return;
  for (auto& rp : it->second.waiting)
    if (e)
      rp.deliver(e);
    else
      rp.deliver(name);
  st.address_dials.erase(it);
}

// A node to keep a connection to from now on, as to a configured one: named
// by a peer (a handle of it came from there), or dialed by address at run
// time and connected.
void keep_dialing(self_ptr self, const std::string& name, const config::endpoint& to) {
  auto& st = self->state;
  if (st.configured.count(name) || name == me(self))
    return;
  st.configured[name] = to;
  st.redial->add(name, clock::now());
  if (st.by_peer.count(name))
    st.redial->connected(name, clock::now());
  else
    self->send(self, redial_atom::value);
}

// Dials `to` by address: its name comes once set up. The key to wait on.
std::uint64_t dial_by_address(self_ptr self, const config::endpoint& to) {
  auto& st = self->state;
  auto key = st.next_key++;
  st.address_dials[key].to = to;
  self->system().spawn(dial_address, caf::actor_cast<caf::actor>(self), key, to, st.params.channel);
  return key;
}

// Every seed address not connected, not being dialed, and not known to be
// this node: dialed by address, and by name from then on (keep_dialing).
void dial_seeds(self_ptr self, const seed_addresses& r) {
  auto& st = self->state;
  if (st.stopping)
    return;
  std::string problems;
  for (const auto& p : r.problems)
    problems += (problems.empty() ? "" : "; ") + p;
  if (problems != st.seed_problems && !problems.empty())
    logging::warn(me(self),
                  {"seeds_unresolved", "", {{"problems", problems}}, "cluster.seeds: " + problems});
  st.seed_problems = problems;
  for (const auto& to : r.found) {
    if (st.not_seeds.count(config::to_string(to)))
      continue;
    if (auto name = st.x->node_at(to); name && st.by_peer.count(*name))
      continue;
    bool dialing = false;
    for (const auto& [key, dial] : st.address_dials)
      dialing = dialing || dial.to == to;
    for (const auto& [name, at] : st.configured)
      dialing = dialing || (at == to && st.by_peer.count(name));
    if (!dialing)
      dial_by_address(self, to);
  }
}

// A node a peer named: dialed if this node could authenticate it, within
// the bounds; what waits for it fails at once otherwise.
void dial_learned(self_ptr self, const std::string& name, const config::endpoint& to) {
  auto& st = self->state;
  if (st.stopping || st.configured.count(name) || st.by_peer.count(name) || name == me(self) ||
      st.learned.count(name))
    return;
  const auto& creds = st.params.connection.tls->creds();
  std::string why;
  auto now = clock::now();
  st.dial_tokens =
      std::min(learned_dial_burst,
               st.dial_tokens + learned_dials_per_second *
                                    std::chrono::duration<double>(now - st.tokens_at).count());
  st.tokens_at = now;
  if (creds.secret.empty() && !creds.trusted.empty() && !creds.trusted.count(name))
    why =
        "this node could not authenticate it (no cluster secret, and no key for it in the "
        "keyring)";
  else if (st.learned.size() >= max_learned)
    why = std::to_string(max_learned) + " nodes named by peers are dialed or connected already";
  else if (st.dial_tokens < 1)
    why = "peers named more than " + std::to_string(int(learned_dials_per_second)) +
          " new nodes a second";
  if (!why.empty()) {
    if (st.learned_refused++ % 100 == 0)
      logging::warn(me(self), {"learned_dial_refused",
                               name,
                               {{"why", why}, {"refused", std::uint64_t{st.learned_refused}}},
                               "not dialing node '" + name + "', which a peer named: " + why +
                                   " (" + std::to_string(st.learned_refused) + " refused so far)"});
    st.x->unreachable(name,
                      make_error(errc::not_connected,
                                 "node '" + name + "' (named by a peer): not dialed: " + why));
    return;
  }
  st.dial_tokens -= 1;
  st.learned.insert(name);
  self->system().spawn(dial, caf::actor_cast<caf::actor>(self), name, to, st.params.channel);
}

void dial_due(self_ptr self) {
  auto& st = self->state;
  st.timer_set = false;
  if (st.stopping)
    return;
  caf::actor node = caf::actor_cast<caf::actor>(self);
  auto now = clock::now();
  for (const auto& peer : st.redial->due(now)) {
    if (st.by_peer.count(peer)) {  // it dialed us meanwhile
      st.redial->connected(peer, now);
      continue;
    }
    // Connecting blocks (address resolution, the handshake of the fabric):
    // never in a scheduled actor. A blocking actor has its own thread.
    self->system().spawn(dial, node, peer, st.configured[peer], st.params.channel);
  }
  schedule_redial(self);
}

void lost(self_ptr self, const std::string& peer, const std::string& reason, bool stopped = false) {
  auto& st = self->state;
  if (st.by_peer.count(peer))
    return;                    // still connected, through the link that was kept
  if (st.learned.erase(peer))  // named by a peer: what waits for it fails, no redial
    st.x->unreachable(peer, make_error(errc::not_connected, "node '" + peer + "': " + reason));
  caf::anon_send(st.owner, closed_atom::value, peer, reason, stopped);
  if (st.configured.count(peer)) {
    st.redial->failed(peer, clock::now());
    schedule_redial(self);
  }
}

// Forgets a link; if it still runs, it ends without a word (it lost a
// tie-break, or the node is going).
void drop_link(self_ptr self, std::uint64_t id, const std::string& why) {
  auto& st = self->state;
  auto it = st.links.find(id);
  if (it == st.links.end())
    return;
  auto e = std::move(it->second);
  st.links.erase(it);
  if (e.up) {
    auto p = st.by_peer.find(e.peer);
    if (p != st.by_peer.end() && p->second == id) {
      st.by_peer.erase(p);
      st.x->route(e.peer, nullptr);
    }
  }
  setup_ended(self, id);
  self->send(e.conn, close_atom::value, why);
}

void on_connected(self_ptr self, const std::shared_ptr<link>& l) {
  auto& st = self->state;
  auto it = st.links.find(l->id());
  if (it == st.links.end())
    return;
  auto& e = it->second;
  const auto& name = l->peer_name();
  // Dialed by address: whatever its name, it is the one. Whoever asked is
  // answered once the owner has been told (below), so that what they ask
  // the directory next finds the node connected.
  std::uint64_t answer = 0;
  if (e.dial_key != 0) {
    auto dial = st.address_dials.find(e.dial_key);
    if (dial != st.address_dials.end())
      keep_dialing(self, name, dial->second.to);
    e.peer = name;
    answer = std::exchange(e.dial_key, 0);
  }
  if (e.dialed && name != e.peer) {
    auto expected = e.peer;
    auto why = "expected node '" + expected + "' at " + config::to_string(st.configured[expected]) +
               ", found node '" + name + "'";
    drop_link(self, l->id(), "not the node dialed");
    lost(self, expected, why);
    caf::anon_send(st.owner, wrong_node_atom::value, expected, why);
    return;
  }
  // Back within the grace of a loss not yet reported: for the owner it never
  // went away, unless this is a new run of the node, whose actors are not
  // the old one's.
  bool already = false;
  if (auto pending = st.pending_loss.find(name); pending != st.pending_loss.end()) {
    if (pending->second.incarnation == l->peer_incarnation())
      already = true;
    else
      caf::anon_send(st.owner, closed_atom::value, name, pending->second.reason,
                     pending->second.stopped);
    st.pending_loss.erase(pending);
  }
  if (auto other = st.by_peer.find(name); other != st.by_peer.end()) {
    auto old = other->second;
    if (l->replaces()) {
      // Its key proves it: the node restarted, and its old session is dead.
      logging::info(me(self), {"peer_restarted",
                               name,
                               {},
                               "node '" + name + "' restarted (its node key proves it): its new " +
                                   "session replaces the old one"});
      drop_link(self, old, "replaced by the node's new session");
      // For the owner the old node is gone: what waited on it fails.
      caf::anon_send(st.owner, closed_atom::value, name,
                     std::string{"it restarted, and its new session replaced the old one"}, true);
    } else {
      // Both dialed at once: keep the connection the smaller name dialed.
      bool mine_dialed_by_smaller = e.dialed == (me(self) < name);
      if (!mine_dialed_by_smaller) {
        drop_link(self, l->id(), "both nodes dialed: the other connection is kept");
        return address_dial_ended(self, answer, caf::error{}, name);
      }
      drop_link(self, old, "both nodes dialed: the other connection is kept");
      already = true;  // the owner saw it connected: nothing changed for it
    }
  }
  e.peer = name;
  e.incarnation = l->peer_incarnation();
  setup_ended(self, l->id());
  e.up = true;
  st.by_peer[name] = l->id();
  st.x->route(name, l);
  if (st.configured.count(name))
    st.redial->connected(name, clock::now());
  if (!already)
    caf::anon_send(st.owner, connected_atom::value, name, l->authenticated());
  address_dial_ended(self, answer, caf::error{}, name);
}

void finish_drain(self_ptr self) {
  auto& st = self->state;
  for (auto& [id, e] : st.links)  // those that outlasted the limit
    self->send(e.conn, close_atom::value, std::string{"this node stopped"});
  st.links.clear();
  if (st.drained.pending())
    st.drained.deliver(true);
  self->quit();
}

void on_closed(self_ptr self, std::uint64_t id, const std::string& reason, bool stopped) {
  auto& st = self->state;
  auto it = st.links.find(id);
  if (it == st.links.end())
    return;
  auto e = it->second;
  drop_link(self, id, reason);
  if (st.stopping) {
    if (st.links.empty())
      finish_drain(self);
    return;
  }
  if (e.dial_key != 0) {
    // Dialing there again gets the same answer (most often: the address
    // is this node's own, a seed that lists every node).
    if (auto dial = st.address_dials.find(e.dial_key); dial != st.address_dials.end() && e.l &&
                                                       e.l->wrong_node() &&
                                                       st.not_seeds.size() < max_seed_addresses)
      st.not_seeds.insert(config::to_string(dial->second.to));
    address_dial_ended(self, e.dial_key, make_error(errc::not_connected, reason), "");
  }
  if (!e.up)  // refused before any memory was exposed: say so, on both sides
    logging::warn(me(self), {"setup_failed",
                             e.peer,
                             {{"reason", reason}, {"dialed", e.dialed ? "yes" : "no"}},
                             (!e.dialed        ? std::string{"a connection"}
                              : e.peer.empty() ? std::string{"a connection dialed by address"}
                                               : "connection to node '" + e.peer + "'") +
                                 " failed during setup: " + reason});
  if (e.up) {
    st.pending_loss[e.peer] = {reason, stopped, e.incarnation};
    self->delayed_send(self, st.params.loss_grace, loss_atom::value, e.peer);
  } else if (e.dialed) {
    lost(self, e.peer, reason);
    if (e.l && e.l->wrong_node() && !e.peer.empty())
      caf::anon_send(st.owner, wrong_node_atom::value, e.peer, reason);
  }
}

// Every link drains (bounded by `drain_limit`), then the node quits;
// answered when it has.
caf::result<bool> drain(self_ptr self) {
  auto& st = self->state;
  st.drained = self->make_response_promise<bool>();
  if (st.stopping)
    return st.drained;
  st.stopping = true;
  if (st.links.empty()) {
    finish_drain(self);
    return st.drained;
  }
  for (auto& [id, e] : st.links)
    self->send(e.conn, drain_atom::value);  // its close is reported
  self->delayed_send(self, st.params.drain_limit, timeout_atom::value);
  return st.drained;
}

// Counters of the connections kept to peers, each asked for its own.
// Every connection's actor is asked; one that ends meanwhile is left out.
caf::result<connection_list> gather_stats(self_ptr self) {
  auto& st = self->state;
  if (st.links.empty())
    return connection_list{};
  auto rp = self->make_response_promise<connection_list>();
  auto out = std::make_shared<connection_list>();
  auto left = std::make_shared<std::size_t>(st.links.size());
  auto one_done = [rp, out, left]() mutable {
    if (--*left > 0)
      return;
    std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
      return std::tie(a.peer, a.id) < std::tie(b.peer, b.id);
    });
    rp.deliver(std::move(*out));
  };
  for (auto& [id, entry] : st.links)
    self->request(entry.conn, std::chrono::seconds(5), stats_atom::value)
        .then(
            [=, id = id](connection_figures& f) mutable {
              auto routed = self->state.by_peer.find(f.peer);
              f.routed = routed != self->state.by_peer.end() && routed->second == id;
              out->push_back(std::move(f));
              one_done();
            },
            [=](caf::error&) mutable { one_done(); });
  return rp;
}

node_impl::behavior_type node(self_ptr self, io_loop* loop, std::shared_ptr<exchange> x,
                              node_params p, caf::actor owner,
                              std::shared_ptr<channels::listener> listener) {
  auto& st = self->state;
  st.params = p;
  st.loop = loop;
  st.x = std::move(x);
  // Before the first dial: a link set up meanwhile tells this actor.
  st.x->set_node(caf::actor_cast<node_events>(self));
  st.owner = std::move(owner);
  st.listener = std::move(listener);
  st.admitting = std::make_unique<admission>(p.max_in_setup);
  st.sessions = std::make_shared<session_registry>(p.sessions, p.nodes);
  st.redial = std::make_unique<redial_schedule>(p.redial, std::random_device{}());
  caf::actor_addr addr = self->address();
  loop->watch(st.listener->fd(), [addr] {
    if (auto a = caf::actor_cast<caf::actor>(addr))
      caf::anon_send(a, accept_atom::value);
  });
  auto now = clock::now();
  for (const auto& peer : p.peers) {
    if (p.nodes)
      p.nodes->pin(peer.name);
    st.configured[peer.name] = peer.address;
    st.redial->add(peer.name, now);
  }
  if (!p.peers.empty())
    self->send(self, redial_atom::value);
  if (!p.seeds.empty())
    self->send(self, seed_atom::value);
  self->set_exit_handler([=](caf::exit_msg& msg) {
    auto& st = self->state;
    for (auto& [id, e] : st.links)
      self->send(e.conn, close_atom::value, std::string{"this node stopped"});
    st.links.clear();
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
      [=](peer_dialed& d) {
        if (d.ch && !self->state.stopping)
          adopt(self, std::move(d.ch), d.peer, true);
        else
          lost(self, d.peer, "cannot connect: " + d.error);
      },
      [=](connected_atom, std::shared_ptr<link>& l) { on_connected(self, l); },
      // A node named by a peer (the node of a handle it sent).
      [=](dial_atom, const std::string& name, const std::string& host, std::uint16_t port) {
        dial_learned(self, name, config::endpoint{host, port});
      },
      // Connect to whatever node listens at host:port: its name, once set up.
      [=](dial_atom, const std::string& host, std::uint16_t port) -> caf::result<std::string> {
        auto& st = self->state;
        if (st.stopping)
          return make_error(errc::stopped, "node '" + me(self) + "' is stopping");
        // Connected to it already (whoever dialed): nothing to do.
        if (auto name = st.x->node_at({host, port}); name && st.by_peer.count(*name)) {
          keep_dialing(self, *name, {host, port});
          return *name;
        }
        auto rp = self->make_response_promise<std::string>();
        st.address_dials[dial_by_address(self, {host, port})].waiting.push_back(rp);
        return rp;
      },
      [=](seed_atom) {
        auto& st = self->state;
        if (st.stopping)
          return;
        self->system().spawn(resolve_seeds_on, caf::actor_cast<caf::actor>(self), st.params.seeds,
                             st.params.resolve_seeds ? st.params.resolve_seeds : resolve_by_dns);
        self->delayed_send(self, st.params.seed_interval, seed_atom::value);
      },
      [=](seeds_resolved& r) { dial_seeds(self, r.addresses); },
      [=](address_dialed& d) {
        auto& st = self->state;
        auto it = st.address_dials.find(d.key);
        if (d.ch && !st.stopping && it != st.address_dials.end()) {
          adopt(self, std::move(d.ch), "", true, d.key);
          return;
        }
        address_dial_ended(self, d.key,
                           make_error(errc::not_connected,
                                      it == st.address_dials.end()
                                          ? d.error
                                          : "cannot connect to " +
                                                config::to_string(it->second.to) + ": " + d.error),
                           "");
      },
      [=](closed_atom, std::uint64_t id, const std::string& reason, bool stopped) {
        on_closed(self, id, reason, stopped);
      },
      [=](writable_atom, std::uint64_t id) {
        auto it = self->state.links.find(id);
        if (it != self->state.links.end() && it->second.up)
          caf::anon_send(self->state.owner, writable_atom::value, it->second.peer);
      },
      [=](stop_atom) -> caf::result<bool> { return drain(self); },
      [=](timeout_atom) {
        if (self->state.stopping)
          finish_drain(self);
      },
      [=](stats_atom) -> caf::result<connection_list> { return gather_stats(self); },
      [=](port_atom) { return self->state.listener->port(); },
  };
}

}  // namespace

node_actor spawn_node(caf::actor_system& sys, io_loop& loop, std::shared_ptr<exchange> x,
                      const node_params& p, caf::actor owner,
                      std::shared_ptr<channels::listener> listener) {
  return sys.spawn(node, &loop, std::move(x), p, std::move(owner), std::move(listener));
}

}  // namespace riomesh::actors
