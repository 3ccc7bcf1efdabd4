// The exchange's inbound path, on the I/O thread: an envelope becomes a
// mailbox element for a local actor, from a proxy of its remote sender,
// with a request id the response can be matched to on its way back; a
// response goes to the actor that waits for it. Links coming and going are
// the node actor's to judge: it hears of them here.
#include <riomesh/actors/reach/system_message.hpp>
#include "exchange_impl.hpp"

#include <riomesh/actors/exchange/remote_proxy.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/actor_system.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/send.hpp>

namespace riomesh::actors {
namespace {

std::string text_of(const std::vector<unsigned char>& body) {
  return std::string(body.begin(), body.end());
}

// A peer's error envelope as an error here; a code we do not know stays
// visible as the peer's text. A peer's words are printable, whoever prints
// them.
caf::error error_of(const std::string& peer, const std::vector<unsigned char>& body) {
  auto code = body.empty() ? 0 : body[0];
  bool known = code == static_cast<unsigned char>(errc::actor_exited) ||
               code == static_cast<unsigned char>(errc::decode_failure) ||
               code == static_cast<unsigned char>(errc::refused);
  std::string text =
      body.empty() ? "" : config::printable(std::string(body.begin() + 1, body.end()));
  if (!known)
    text = "node '" + peer + "' answered with error code " + std::to_string(code) + ": " + text;
  return make_error(known ? static_cast<errc>(code) : errc::decode_failure, text);
}

enum class decoded { ok, failed, parked };

// The envelope's message, its buffers the views that arrived, its actor
// handles proxies (or our own actors). One with a handle of a node we do
// not know waits for the peer to name that node (parked: `m` was taken).
decoded decode_counted(exchange::impl& x, link& l, inbound_message& m, caf::message& msg,
                       std::string& error) {
  std::uint64_t copied = 0;
  auto placed = [&m](std::size_t i) { return m.placed[i]; };
  // A body too large to go inline came placed, as the last buffer: it is
  // read where it landed.
  const unsigned char* body = m.env.body.data();
  std::size_t size = m.env.body.size(), buffers = m.placed.size();
  if (m.env.flags & envelope::body_placed) {
    body = m.placed.back().data();
    size = m.placed.back().size();
    --buffers;
  }
  decode_scope met;
  bool ok = decode_message(x.sys, body, size, buffers, placed, msg, error, &copied,
                           x.handles.codec(), &x.signatures);
  if (auto unknown = met.unknown(); !unknown.empty()) {
    x.park(l, m, unknown);
    return decoded::parked;
  }
  if (auto nodes = met.unresolvable(); !nodes.empty()) {
    error = "it holds actor handles of nodes that node '" + l.peer_name() +
            "' could not name either (" + nodes + ")";
    return decoded::failed;
  }
  if (!ok)
    return decoded::failed;
  x.count.payload_copied_in += copied;
  for (auto& b : m.placed)
    x.count.bytes_placed_in += b.size();
  return decoded::ok;
}

}  // namespace

// An error envelope back to the peer, for a request it made: the riomesh
// error code (one byte), then text.
void exchange::impl::misbehaved(link& l, const std::string& what) {
  ++count.bad_inbound;
  auto v = l.refusals().note(std::chrono::steady_clock::now());
  const auto& peer = l.peer_name();
  if (v.unlogged > 0)
    logging::warn(params.node_name, {"refusals_unlogged",
                                     peer,
                                     {{"count", std::uint64_t{v.unlogged}}},
                                     "from node '" + peer + "': " + std::to_string(v.unlogged) +
                                         " more refusals were counted, not logged"});
  if (v.log)
    logging::warn(params.node_name,
                  {"message_refused", peer, {{"why", what}}, "from node '" + peer + "': " + what});
  else if (v.first_unlogged)
    logging::warn(params.node_name, {"message_refused",
                                     peer,
                                     {{"why", what}},
                                     "from node '" + peer + "': " + what +
                                         " (more refusals from it are counted, not logged, for "
                                         "10 s)"});
  if (v.cut) {
    logging::warn(
        params.node_name,
        {"peer_cut_off",
         peer,
         {{"refused", std::uint64_t{100}}, {"within_seconds", std::uint64_t{10}}},
         "node '" + peer + "' is cut off: more than 100 of its messages refused within 10 s"});
    l.cut("more than 100 of its messages were refused within 10 s");
  }
}

void exchange::impl::refuse(link& l, const envelope& in, errc code, const std::string& why) {
  misbehaved(l, "to actor " + std::to_string(in.receiver) + ": " + why);
  if (in.kind != envelope_kind::request)
    return;
  outbound_message m;
  m.env.kind = envelope_kind::error;
  m.env.receiver = in.sender;
  m.env.request_id = in.request_id;
  m.env.body.push_back(static_cast<unsigned char>(code));
  auto text = "node '" + params.node_name + "': " + why;
  m.env.body.insert(m.env.body.end(), text.begin(), text.end());
  submit(l, std::move(m));
}

void exchange::impl::deliver(link& l, inbound_message& m) {
  auto& env = m.env;
  const auto& peer = l.peer_name();
  bool request = env.kind == envelope_kind::request;
  if (request && (env.request_id == 0 || env.request_id > pending_table<int>::max_id))
    return refuse(l, env, errc::decode_failure,
                  "request id " + std::to_string(env.request_id) + " out of range");
  auto [reached, guard_of] = exports.target(env.receiver, peer);
  auto target = caf::actor_cast<caf::strong_actor_ptr>(reached);
  // An actor this peer was never given is refused as one that does not
  // exist: ids say nothing of what else lives here.
  if (!target)
    return refuse(l, env, errc::actor_exited,
                  "no such actor (it exited, or was never published or handed to this node)");
  caf::message msg;
  std::string error;
  switch (decode_counted(*this, l, m, msg, error)) {
    case decoded::parked:
      return;
    case decoded::failed:
      return refuse(l, env, errc::decode_failure, error);
    case decoded::ok:
      break;
  }
  if (const char* kind = system_message_kind(msg)) {
    ++count.system_refused;
    return refuse(l, env, errc::refused,
                  std::string{"a CAF system message ("} + kind +
                      ") from the wire; links and monitors across nodes are riomesh's own, and "
                      "it makes their messages itself");
  }
  if (guard_of)
    if (auto why = guard_of(msg, l.admin()); !why.empty())
      return refuse(l, env, errc::refused, why);
  caf::strong_actor_ptr sender;
  if (env.sender != 0 && !(sender = proxy_for(l, env.sender)))
    return refuse(l, env, errc::refused,
                  "sender " + std::to_string(env.sender) + " would be more than " +
                      std::to_string(params.max_proxies_per_peer) +
                      " actors of this node known here at once");
  ++count.messages_in;
  auto mid = request ? caf::message_id{caf::message_id::default_async_value | env.request_id}
                     : caf::make_message_id();
  // The one hand-off inbound: into the target's mailbox.
  enqueue(target, std::move(sender), mid, std::move(msg));
}

void exchange::impl::complete(link& l, inbound_message& m) {
  const auto& peer = l.peer_name();
  // Decoded first: a response naming a node we do not know waits (parked),
  // and its requester with it.
  caf::message msg;
  std::string error;
  auto outcome = decoded::ok;
  if (m.env.kind != envelope_kind::error) {
    outcome = decode_counted(*this, l, m, msg, error);
    if (outcome == decoded::parked)
      return;
  }
  auto w = requests.answered(peer, m.env.request_id, request_table::clock::now());
  if (!w) {
    // Answered after its requester gave up, or a lie: nothing waits.
    logging::debug(params.node_name,
                   {"answer_unawaited",
                    peer,
                    {{"kind", to_string(m.env.kind)}, {"request", m.env.request_id}},
                    "from node '" + peer + "': a " + to_string(m.env.kind) + " for request " +
                        std::to_string(m.env.request_id) + " nobody waits for"});
    return;
  }
  ++count.responses_in;
  if (m.env.kind == envelope_kind::error)
    return fail_request(*w, error_of(peer, m.env.body));
  if (outcome == decoded::failed) {
    ++count.bad_inbound;
    return fail_request(
        *w, make_error(errc::decode_failure, "response from node '" + peer + "': " + error));
  }
  enqueue(w->requester, w->proxy, w->mid.response_id(), std::move(msg));
}

void exchange::impl::answer_resolve(link& l, const envelope& in) {
  outbound_message m;
  m.env.kind = envelope_kind::resolved;
  m.env.request_id = in.request_id;
  caf::strong_actor_ptr who;
  if (auto p = exports.published(text_of(in.body))) {
    who = p->handle;
    m.env.sender = p->id;
    m.env.body.assign(p->interface.begin(), p->interface.end());
  }
  if (who)
    export_to(who, l.peer_name(), access::reach);
  submit(l, std::move(m));
}

// A member hands one of our actors it was handed on to another node.
void exchange::impl::introduced(link& l, const envelope& in) {
  std::string to(in.body.begin(), in.body.end());
  bool ok = false;
  if (config::is_node_name(to) && to != params.node_name)
    ok = exports.introduce(in.receiver, l.peer_name(), to);
  if (!ok)
    refuse(l, in, errc::refused,
           "an introduction of actor " + std::to_string(in.receiver) + " to '" +
               config::printable(to) + "', which it was not handed");
}

void exchange::inbound(link& l, inbound_message& m) {
  auto& x = *impl_;
  // Behind a message that waits for a node query, all the link brings
  // waits too (a down after it must not come first), but the answer.
  if (m.env.kind != envelope_kind::node_info) {
    auto behind = x.held.queue_behind(l.id(), m);
    if (behind == held_inbound<inbound_message>::behind::taken)
      return;
    if (behind == held_inbound<inbound_message>::behind::full) {
      auto waiting = std::uint64_t{x.held.waiting(l.id())};
      logging::warn(x.params.node_name,
                    {"node_query_unanswered",
                     l.peer_name(),
                     {{"waiting", waiting}},
                     "node '" + l.peer_name() + "' does not answer a node query: " +
                         std::to_string(waiting) + " messages wait for it"});
      return l.drop("it left a node query unanswered while " + std::to_string(waiting) +
                    " messages waited for it");
    }
  }
  switch (m.env.kind) {
    case envelope_kind::message:
    case envelope_kind::request:
      return x.deliver(l, m);
    case envelope_kind::response:
    case envelope_kind::error:
      return x.complete(l, m);
    case envelope_kind::resolve:
      return x.answer_resolve(l, m.env);
    case envelope_kind::resolved:
      // Lookups wait in the directory, the actor that answers them.
      x.tell(x.directory, resolved_atom::value, l.peer_name(), m.env.request_id, m.env.sender,
             text_of(m.env.body));
      return;
    case envelope_kind::down:
      return x.handles.kill(
          l.peer_name(), m.env.sender,
          make_error(errc::actor_exited, "actor " + std::to_string(m.env.sender) + " on node '" +
                                             l.peer_name() +
                                             "': " + config::printable(text_of(m.env.body))));
    case envelope_kind::watch:
      return x.watched(l, m.env);
    case envelope_kind::link:
    case envelope_kind::unlink:
      return x.linked(l, m.env, m.env.kind == envelope_kind::link);
    case envelope_kind::node_query:
      return x.answer_node_query(l, m.env);
    case envelope_kind::node_info:
      return x.node_info(l, m.env);
    case envelope_kind::grant_use:
      return x.lent.used(l, m);
    case envelope_kind::grant_status:
      return x.holding.answered(l, m.env);
    case envelope_kind::introduce:
      return x.introduced(l, m.env);
    case envelope_kind::release:
    case envelope_kind::piece:
    case envelope_kind::farewell:
    case envelope_kind::arena:
      break;  // the connection's own
  }
}

void exchange::established(link& l) {
  // Routed at once if the peer has no route yet: what it sends may be
  // answered right away (on this thread, even), before the node actor has
  // looked at the link. The node actor decides which link stays, and
  // routes that one.
  if (!impl_->learn_peer(l)) {
    logging::warn(impl_->params.node_name,
                  {"node_id_taken",
                   l.peer_name(),
                   {},
                   l.where() + ": its node id is another node's; the connection is dropped"});
    return l.drop("its CAF node id is another node's");
  }
  learned_.insert(l.id());
  // What waited for a node being dialed goes now.
  if (impl_->routes.set_first(l.peer_name(), l.shared_from_this()))
    impl_->route_ready(l.peer_name(), l.shared_from_this());
  impl_->tell(impl_->node, connected_atom::value, l.shared_from_this());
}

void exchange::writable(link& l) {
  impl_->tell(impl_->node, writable_atom::value, l.id());
}

void exchange::closed(link& l, const std::string& reason, bool stopped) {
  if (learned_.erase(l.id()))
    impl_->handles.nodes().live(l.peer_name(), false);
  if (!l.peer_name().empty())
    impl_->routes.ended(l.peer_name(), &l, reason);
  impl_->held.drop(l.id());    // what waited on it goes with it
  impl_->lent.link_closed(l);  // their maps went with the connection
  impl_->holding.link_closed(l, reason);
  impl_->tell(impl_->node, closed_atom::value, l.id(), reason, stopped);
}

}  // namespace riomesh::actors
