// Actor handles across nodes. A handle is written as CAF writes one: the
// actor's id and its node's id (this node's, kept by CAF's actor registry
// for a local actor; the remote node's, for a proxy). Read back, a handle of
// another node becomes the exchange's proxy of that actor (make_proxy),
// whose node is found by its id in the node table; a node nobody told us of
// yet is asked of the peer the handle came from (node query), and what that
// peer sent waits meanwhile, in order. A new proxy tells its actor's node
// to keep the actor alive for us and say when it exits (watch).
#include "exchange_impl.hpp"

#include <riomesh/actors/exchange/remote_proxy.hpp>
#include <riomesh/actors/peers/node_query.hpp>
#include <riomesh/config/address.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>

#include <caf/actor_registry.hpp>
#include <caf/actor_system.hpp>
#include <caf/node_id.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>

namespace riomesh::actors {
namespace {

// What the decode running on this thread met (decode_scope::met): handles
// of nodes not in the table yet (to ask about), and of nodes the sender
// could not name either.
thread_local decode_scope::met* decoding = nullptr;

std::string hex(const node_table::key& k) {
  std::string out;
  char b[3];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(b, sizeof b, "%02x", k.second[static_cast<std::size_t>(i)]);
    out += b;
  }
  return out + "..#" + std::to_string(k.first);
}

}  // namespace

// ---- node ids ---------------------------------------------------------------------

node_identity identity_of(const caf::node_id& n) {
  node_identity out;
  auto* d = dynamic_cast<const caf::node_id::default_data*>(n.operator->());
  if (!d)
    return out;
  out.process_id = d->process_id();
  auto host = d->host_id();
  std::copy(host.begin(), host.end(), out.host_id.begin());
  return out;
}

caf::node_id node_id_of(const node_identity& id) {
  caf::node_id::default_data::host_id_type host;
  std::copy(id.host_id.begin(), id.host_id.end(), host.begin());
  return caf::make_node_id(id.process_id, host);
}

node_identity synthesized_identity(const std::string& name) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  std::string seed = "riomesh node " + name;
  SHA1(reinterpret_cast<const unsigned char*>(seed.data()), seed.size(), digest);
  node_identity id;
  id.process_id = 1;
  std::copy(digest, digest + id.host_id.size(), id.host_id.begin());
  return id;
}

void codec_unit::exec_later(caf::resumable* job) {
  system().scheduler().enqueue(job);
}

exchange::impl::~impl() {
  // clear() emptied the registry while the actor system ran; what is left
  // (an exchange never cleared) goes without its proxies being told.
}

caf::node_id exchange::impl::node_id_of(const std::string& peer) {
  if (auto n = nodes->by_name(peer))
    return actors::node_id_of(n->id);
  return actors::node_id_of(synthesized_identity(peer));
}

decode_scope::decode_scope() : prev_(decoding) {
  decoding = &met_;
}

decode_scope::~decode_scope() {
  decoding = prev_;
}

std::vector<node_table::key> decode_scope::unknown() const {
  auto keys = met_.unknown;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::string decode_scope::unresolvable() const {
  std::string out;
  for (const auto& k : met_.unresolvable)
    out += (out.empty() ? "" : ", ") + hex(k);
  return out;
}

// ---- proxies ----------------------------------------------------------------------

caf::strong_actor_ptr exchange::impl::make_proxy(caf::node_id nid, caf::actor_id aid) {
  if (aid == 0 || !nid)
    return nullptr;  // a null handle
  auto key = node_table::key_of(identity_of(nid));
  auto n = nodes->by_id(key);
  if (!n || n->name == params.node_name) {
    if (decoding)
      (unresolvable.contains(key) ? decoding->unresolvable : decoding->unknown).push_back(key);
    return nullptr;
  }
  if (!census.admit(n->name, nid))
    return nullptr;
  auto p = make_remote_proxy(sys, owner.lock(), n->name, nid, aid);
  if (aid == relay_sender)
    return p;  // the peer itself, passing a request on: nothing to watch
  // Its node keeps the actor alive for us, and says when it exits.
  outbound_message m;
  m.env.kind = envelope_kind::watch;
  m.env.receiver = aid;
  send_or_wait(n->name, std::move(m));
  return p;
}

caf::strong_actor_ptr exchange::impl::proxy_for(link& l, std::uint64_t id) {
  if (!l.peer_node())  // not learned yet: by name
    return proxy_for(l.peer_name(), id);
  return proxies.get_or_put(l.peer_node(), id);
}

caf::strong_actor_ptr exchange::impl::proxy_for(const std::string& peer, std::uint64_t id) {
  if (!nodes->by_name(peer))  // a peer known by name only (it told no identity)
    nodes->learn(peer, synthesized_identity(peer), {});
  return proxies.get_or_put(node_id_of(peer), id);
}

void exchange::impl::kill_proxy(const std::string& peer, std::uint64_t id, const caf::error& why) {
  auto nid = node_id_of(peer);
  if (!proxies.get(nid, id))
    return;
  proxies.erase(nid, id, why);
  census.release(peer);
}

// ---- what peers say of handles ------------------------------------------------------

bool exchange::impl::learn_peer(link& l) {
  const auto& terms = l.peer_terms();
  auto id = terms.identity.valid() ? terms.identity : synthesized_identity(l.peer_name());
  // The session registry refused ids of other nodes already; two sessions
  // claiming one id at once meet here, and the second goes.
  if (!nodes->learn(l.peer_name(), id, listen_address(id, l.remote())))
    return false;
  nodes->live(l.peer_name(), true);
  l.peer_node(actors::node_id_of(id));
  return true;
}

// The peer holds a proxy of our actor `in.receiver` now: it stays alive while
// the peer is connected, and the peer hears when it exits (at once if it
// has, or never was).
void exchange::impl::watched(link& l, const envelope& in) {
  caf::strong_actor_ptr who;
  auto a = access::none;
  {
    std::lock_guard<std::mutex> guard(tables_lock);
    a = exports.access_of(in.receiver, l.peer_name());
    if (a != access::none)
      who = caf::actor_cast<caf::strong_actor_ptr>(exports.find(in.receiver));
  }
  if (who) {
    export_to(who, l.peer_name(), a);
    return;
  }
  outbound_message m;
  m.env.kind = envelope_kind::down;
  m.env.sender = in.receiver;
  std::string why = "no such actor (it exited)";
  m.env.body.assign(why.begin(), why.end());
  submit(l, std::move(m));
}

// The peer's actor `in.sender` linked to (or unlinked from) our actor
// `in.receiver` through its proxy: we link ours to a proxy of theirs. Each
// one's exit reaches the other node as a down, which kills its proxy, and
// the link carries that exit on, as a link between local actors would.
void exchange::impl::linked(link& l, const envelope& in, bool establish) {
  caf::strong_actor_ptr target;
  auto a = access::none;
  {
    std::lock_guard<std::mutex> guard(tables_lock);
    a = exports.access_of(in.receiver, l.peer_name());
    if (a != access::none)
      target = caf::actor_cast<caf::strong_actor_ptr>(exports.find(in.receiver));
  }
  // A link lets the peer's actor's exit end ours: only an actor handed to
  // the peer (its handle sent to it) takes one. Reaching it by name, or
  // hearing from it, is not enough.
  if (establish && target && a != access::link) {
    ++count.links_refused;
    return refuse(l, in, errc::refused,
                  "a link to actor " + std::to_string(in.receiver) +
                      ", which was never handed to this node (published or sending is not enough)");
  }
  auto linker = target ? proxy_for(l, in.sender) : nullptr;
  if (!target) {
    if (establish) {  // it has exited: the linked actor must hear so
      envelope e;
      e.kind = envelope_kind::down;
      e.sender = in.receiver;
      std::string why = "no such actor (it exited)";
      e.body.assign(why.begin(), why.end());
      outbound_message m;
      m.env = std::move(e);
      submit(l, std::move(m));
    }
    return;
  }
  if (!linker)
    return;
  remote_proxy::quiet_links quiet;  // the peer knows: it asked
  if (establish)
    target->get()->add_link(linker->get());
  else
    target->get()->remove_link(linker->get());
}

void exchange::impl::answer_node_query(link& l, const envelope& in) {
  outbound_message m;
  m.env.kind = envelope_kind::node_info;
  m.env.request_id = in.request_id;
  for (const auto& key : decode_node_query(in.body))
    append_node_answer(m.env.body, nodes->by_id(key));
  submit(l, std::move(m));
}

// The peer's answer to our node query: learn the nodes it named (and dial
// them), remember those it did not know, and deliver what waited for it.
void exchange::impl::node_info(link& l, const envelope& in) {
  const auto* asked = held.asked(l.id(), in.request_id);
  if (!asked)
    return;  // nothing asked: a lie or a late answer, of no consequence
  std::string error;
  auto answers = decode_node_info(in.body, asked->size(), error);
  if (!answers) {
    // What waited on the answer can never be read: the peer's connection
    // goes, saying why (what it sent after is not taken out of order).
    logging::warn(params.node_name,
                  {"node_info_malformed",
                   l.peer_name(),
                   {{"why", error}},
                   "node '" + l.peer_name() +
                       "' answered a node query with a malformed node info: " + error});
    return l.drop("its answer to a node query was malformed: " + error);
  }
  for (std::size_t i = 0; i < asked->size(); ++i) {
    const auto& key = (*asked)[i];
    auto& a = (*answers)[i];
    if (!a.known || !config::is_node_name(a.name) || a.name == params.node_name) {
      unresolvable.note(key);
      continue;
    }
    node_identity id;
    id.process_id = key.first;
    id.host_id = key.second;
    if (!nodes->by_name(a.name)) {
      nodes->learn(a.name, id, a.where);
      // Messages for it wait until it is dialed and set up.
      awaiting_route.expect(a.name);
      tell(node, dial_atom::value, a.name, a.where.host, a.where.port);
    }
  }
  deliver_parked(l);
}

// A message naming nodes we do not know waits, and so does what the link
// brings after it, until the peer has said who those nodes are.
bool exchange::impl::park(link& l, inbound_message& m,
                          const std::vector<node_table::key>& unknown) {
  auto q = held.hold(l.id(), std::move(m), unknown);
  outbound_message ask;
  ask.env.kind = envelope_kind::node_query;
  ask.env.request_id = q.id;
  ask.env.body = encode_node_query(q.asked);
  submit(l, std::move(ask));
  return true;
}

void exchange::impl::deliver_parked(link& l) {
  auto waiting = held.release(l.id());
  auto self = owner.lock();
  while (!waiting.empty()) {
    auto m = std::move(waiting.front());
    waiting.pop_front();
    if (held.holds(l.id())) {
      held.put_back(l.id(), std::move(m));  // a later one asked again
      continue;
    }
    if (self)
      self->inbound(l, m);
    // Cut off for what it sent: nothing more of it is delivered.
    if (auto p = l.current_phase(); p == link::phase::closed || p == link::phase::leaving)
      return held.drop(l.id());
  }
}

// ---- routes to nodes being dialed ---------------------------------------------------

void exchange::impl::send_or_wait(const std::string& peer, outbound_message&& m) {
  if (auto l = route_to(peer)) {
    if (submit(*l, std::move(m)) != link::submitted::queued && m.on_failure)
      m.on_failure(send_failure::node_lost, l->where() + ": cannot queue");
    return;
  }
  if (awaiting_route.hold(peer, m))
    return;
  if (m.on_failure)
    m.on_failure(send_failure::node_lost, sys.render(not_connected(peer)));
}

void exchange::impl::route_ready(const std::string& peer, const std::shared_ptr<link>& l) {
  for (auto& m : awaiting_route.take(peer)) {
    auto failure = m.on_failure;
    if (submit(*l, std::move(m)) != link::submitted::queued && failure)
      failure(send_failure::node_lost, l->where() + ": cannot queue");
  }
}

void exchange::impl::route_failed(const std::string& peer, const caf::error& why) {
  for (auto& m : awaiting_route.take(peer))
    if (m.on_failure)
      m.on_failure(send_failure::node_lost, sys.render(why));
}

}  // namespace riomesh::actors
