// Actor handles across nodes. A handle is written as CAF writes one: the
// actor's id and its node's id (this node's, kept by CAF's actor registry
// for a local actor; the remote node's, for a proxy). Read back, a handle of
// another node becomes the exchange's proxy of that actor (the handle table
// finds it, new_proxy makes it), its node found by its id in the node
// table; a node nobody told us of yet is asked of the peer the handle came
// from (node query), and what that peer sent waits meanwhile, in order. A
// new proxy tells its actor's node to keep the actor alive for us and say
// when it exits (watch).
#include "exchange_impl.hpp"

#include <riomesh/actors/exchange/remote_proxy.hpp>
#include <riomesh/actors/peers/node_query.hpp>
#include <riomesh/config/address.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>

#include <caf/actor_registry.hpp>
#include <caf/actor_system.hpp>
#include <caf/node_id.hpp>

namespace riomesh::actors {

// ---- proxies ----------------------------------------------------------------------

// A proxy for a handle the table could not find: the actor's node keeps
// it alive for us, and says when it exits.
caf::strong_actor_ptr exchange::impl::new_proxy(const std::string& peer, const caf::node_id& nid,
                                                caf::actor_id aid) {
  auto p = make_remote_proxy(sys, owner.lock(), peer, nid, aid);
  if (aid == relay_sender)
    return p;  // the peer itself, passing a request on: nothing to watch
  outbound_message m;
  m.env.kind = envelope_kind::watch;
  m.env.receiver = aid;
  send_or_wait(peer, std::move(m));
  return p;
}

// ---- what peers say of handles ------------------------------------------------------

bool exchange::impl::learn_peer(link& l) {
  // The session registry refused ids of other nodes already; two sessions
  // claiming one id at once meet here, and the second goes.
  caf::node_id nid;
  if (!handles.learn_peer(l.peer_name(), l.peer_terms().identity, l.remote(), nid))
    return false;
  l.peer_node(nid);
  return true;
}

// The peer holds a proxy of our actor `in.receiver` now: it stays alive while
// the peer is connected, and the peer hears when it exits (at once if it
// has, or never was).
void exchange::impl::watched(link& l, const envelope& in) {
  auto [a, found] = exports.reach(in.receiver, l.peer_name());
  if (auto who = caf::actor_cast<caf::strong_actor_ptr>(found)) {
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
  auto [a, found] = exports.reach(in.receiver, l.peer_name());
  auto target = caf::actor_cast<caf::strong_actor_ptr>(found);
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
    append_node_answer(m.env.body, handles.nodes().by_id(key));
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
      handles.unresolvable(key);
      continue;
    }
    node_identity id;
    id.process_id = key.first;
    id.host_id = key.second;
    if (!handles.nodes().by_name(a.name)) {
      handles.nodes().learn(a.name, id, a.where);
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
