// The exchange's tables and its outbound path (on senders' threads).
// The inbound path is in exchange_inbound.cpp.
#include "exchange_impl.hpp"

#include <riomesh/actors/exchange/remote_proxy.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/actor_system.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/mailbox_element.hpp>

#include <optional>
#include <set>

namespace riomesh::actors {

exchange::exchange(caf::actor_system& sys, exchange_params p)
    : impl_(std::make_shared<impl>(sys, std::move(p))) {
  // What CAF writes for a node id: the scanner finds handles by its start.
  std::vector<char> bytes;
  caf::binary_serializer sink{sys.dummy_execution_unit(), bytes};
  auto id = sys.node();
  if (!sink(id))
    impl_->scanner = handle_scan(std::vector<unsigned char>(bytes.begin(), bytes.end()));
  impl_->shared_self = impl_;
}

std::shared_ptr<exchange> exchange::make(caf::actor_system& sys, exchange_params p) {
  auto x = std::make_shared<exchange>(sys, std::move(p));
  x->impl_->owner = x;
  x->impl_->handles.nodes().learn(x->impl_->params.node_name, x->identity(),
                                  x->impl_->params.listen);
  x->impl_->handles.nodes().pin(x->impl_->params.node_name);
  return x;
}

std::optional<std::string> exchange::node_at(const config::endpoint& at) const {
  if (auto n = impl_->handles.nodes().by_address(at))
    return n->name;
  return std::nullopt;
}

node_identity exchange::identity() const {
  auto id = identity_of(impl_->sys.node());
  const auto& at = impl_->params.listen;
  // A wildcard address says nothing: peers use the one we connect from.
  if (at.host != "0.0.0.0" && at.host != "::")
    id.listen_host = at.host;
  id.listen_port = at.port;
  return id;
}

exchange::~exchange() = default;

void exchange::set_node(node_events node) {
  impl_->node = std::move(node);
}

void exchange::set_directory(directory_events directory) {
  impl_->directory = std::move(directory);
}

void exchange::run_actors_on(io_loop& loop, const io_executor_limits& limits) {
  impl_->executor = std::make_unique<io_executor>(impl_->sys, loop.thread_id(), limits);
  impl_->loop = &loop;
  impl_->executor->after_turn([&loop](io_executor::clock::time_point end) {
    auto bytes = loop.take_turn_bytes();
    return io_executor::turn_output{loop.send_taken(end), bytes};
  });
  loop.after_each_round([run = impl_->executor.get()] { return run->run(); });
}

void exchange::route(const std::string& peer, std::shared_ptr<link> l) {
  impl_->routes.set(peer, l);
  if (l)
    impl_->route_ready(peer, l);
}

std::shared_ptr<link> exchange::route_to(const std::string& peer) const {
  return impl_->route_to(peer);
}

std::shared_ptr<link> exchange::impl::route_to(const std::string& peer) const {
  return routes.find(peer);
}

// ---- outbound ------------------------------------------------------------------

namespace {

errc errc_of(send_failure f) {
  switch (f) {
    case send_failure::not_mapped:
    case send_failure::past_map:
    case send_failure::misfit:
      return errc::not_mapped;
    case send_failure::too_large:
      return errc::too_large;
    case send_failure::stopped:
      return errc::stopped;
    case send_failure::node_lost:
      break;
  }
  return errc::node_lost;
}

}  // namespace

void exchange::impl::undeliverable(const std::string& peer, std::uint64_t wait,
                                   const caf::strong_actor_ptr& sender, caf::message_id mid,
                                   const caf::strong_actor_ptr& proxy, caf::error why) {
  ++count.undeliverable;
  if (is(why, errc::congested))
    routes.congested(peer);
  if (mid.is_request()) {
    // It waits in the table: whoever takes it first answers.
    if (auto w = requests.take(peer, wait))
      fail_request(*w, std::move(why));
    return;
  }
  if (mid.is_response()) {
    logging::warn(params.node_name,
                  {"response_lost",
                   peer,
                   {{"why", sys.render(why)}},
                   "a response to node '" + peer + "' was lost: " + sys.render(why)});
    return;
  }
  if (sender)
    enqueue(sender, proxy, caf::make_message_id(),
            caf::make_message(undelivered_atom::value, peer, std::move(why)));
}

void exchange::impl::fail_request(const request_wait& w, caf::error why) {
  if (w.requester)
    enqueue(w.requester, w.proxy, w.mid.response_id(), caf::make_message(std::move(why)));
}

caf::error exchange::impl::not_connected(const std::string& peer) const {
  auto why = routes.last_end(peer);
  return make_error(errc::not_connected, "node '" + peer + "'" + (why ? ": " + *why : ""));
}

void exchange::impl::keep_findable(const caf::strong_actor_ptr& who) {
  // A peer may send the handle back: CAF's deserializer finds this node's
  // actors in its registry only, where its serializer puts what it writes.
  // A sender, or a name resolved, went out without it: put it there too,
  // for as long as the export table keeps it.
  sys.registry().put(who->id(), who);
}

void exchange::impl::export_to(const caf::strong_actor_ptr& who, const std::string& peer,
                               access a) {
  if (!exports.learn(who->id(), caf::actor_cast<caf::weak_actor_ptr>(who), peer, who, a))
    return;
  keep_findable(who);
  // Its exit tells the peers that know it, from the thread it exits on.
  std::weak_ptr<impl> me = shared_self;
  auto id = who->id();
  who->get()->attach_functor([me, id](const caf::error& reason) {
    if (auto x = me.lock())
      x->exported_exit(id, reason);
  });
}

void exchange::impl::exported_exit(std::uint64_t id, const caf::error& reason) {
  auto peers = exports.exited(id);
  auto text = sys.render(reason);
  for (const auto& peer : peers) {
    envelope e;
    e.kind = envelope_kind::down;
    e.sender = id;
    e.body.assign(text.begin(), text.end());
    send_control(peer, std::move(e));
  }
}

// The handles written into a message for `peer`: ours it may address and
// link to from now on; a third node's is introduced to that node, which
// lets `peer` do the same there if we may.
void exchange::impl::hand_over(const std::string& peer, const encoded_message& enc) {
  auto found = scanner.scan(enc.body.data(), enc.body.size(), enc.opaque);
  if (found.empty())
    return;
  auto own = node_table::key_of(identity_of(sys.node()));
  for (const auto& h : found) {
    if (h.node == own) {
      if (auto who = sys.registry().get(h.actor))  // CAF put it there as it wrote it
        export_to(who, peer, access::link);
      continue;
    }
    auto n = handles.nodes().by_id(h.node);
    if (!n || n->name == peer)
      continue;  // the peer's own actor, or a node we cannot tell
    envelope e;
    e.kind = envelope_kind::introduce;
    e.receiver = h.actor;
    e.body.assign(peer.begin(), peer.end());
    send_control(n->name, std::move(e));
  }
}

bool exchange::impl::send_control(const std::string& peer, envelope&& e) {
  auto l = routes.find(peer);
  if (!l)
    return false;
  outbound_message m;
  m.env = std::move(e);
  return submit(*l, std::move(m)) == link::submitted::queued;
}

namespace {

// What a message through a proxy does when the connection drops it: its
// sender hears (a request: its error response). The peer's name comes
// from the proxy, not a copy of it in every message's callback.
failure_callback undelivered(std::weak_ptr<exchange::impl> me, std::uint64_t wait,
                             caf::strong_actor_ptr sender, caf::message_id mid,
                             caf::strong_actor_ptr proxy) {
  auto tell = [me = std::move(me), wait, sender = std::move(sender), mid, proxy = std::move(proxy)](
                  send_failure f, const std::string& why) {
    auto x = me.lock();
    if (!x || !proxy)
      return;
    const auto& peer = static_cast<remote_proxy*>(proxy->get())->peer();
    x->undeliverable(peer, wait, sender, mid, proxy, make_error(errc_of(f), why));
  };
  static_assert(failure_callback::stored_inline<decltype(tell)>,
                "a message through a proxy would allocate for its failure callback");
  return tell;
}

}  // namespace

void exchange::forward(const std::string& peer, std::uint64_t remote_id,
                       const caf::strong_actor_ptr& proxy, caf::mailbox_element& what) {
  auto& x = *impl_;
  auto sender = std::move(what.sender);
  auto mid = what.mid;
  outbound_message m;
  m.env.receiver = remote_id;
  std::uint64_t wait = 0;
  if (mid.is_response()) {
    m.env.kind = envelope_kind::response;
    m.env.request_id = mid.request_id().integer_value();
  } else if (mid.is_request()) {
    m.env.kind = envelope_kind::request;
    wait = x.requests.add(peer, {sender, mid, proxy, std::chrono::steady_clock::now()});
    m.env.request_id = wait;
    ++x.count.requests_out;
  } else {
    m.env.kind = envelope_kind::message;
  }
  // A sender of this node is told by its id, and kept for the peer; one
  // of another node (a message passed on) would be taken for ours: it goes
  // without (a request's answer still finds it, through this node).
  if (sender && sender->node() == x.sys.node()) {
    m.env.sender = sender->id();
    x.export_to(sender, peer, access::reach);
  } else if (sender && mid.is_request()) {
    m.env.sender = relay_sender;
  }
  encoded_message enc;
  std::string error;
  if (!encode_message(x.sys, what.move_content_to_message(), x.params.eager_threshold, enc, error,
                      x.handles.codec(), &x.prefixes))
    return x.undeliverable(peer, wait, sender, mid, proxy,
                           make_error(errc::encode_failure, "to node '" + peer + "': " + error));
  x.hand_over(peer, enc);
  auto l = route_to(peer);
  if (!l) {
    // A node being dialed (learned from a handle): the message waits.
    m.env.body = std::move(enc.body);
    m.placed = std::move(enc.placed);
    m.on_failure = undelivered(x.shared_self, wait, sender, mid, proxy);
    if (x.awaiting_route.hold(peer, m)) {
      ++x.count.messages_out;
      return;
    }
    return x.undeliverable(peer, wait, sender, mid, proxy, x.not_connected(peer));
  }
  m.env.body = std::move(enc.body);
  m.placed = std::move(enc.placed);
  x.count.payload_copied_out += enc.copied;
  std::uint64_t placed_bytes = 0;
  for (auto& b : m.placed)
    placed_bytes += b.size();
  x.count.bytes_placed_out += placed_bytes;
  m.on_failure = undelivered(x.shared_self, wait, sender, mid, proxy);
  switch (x.submit(*l, std::move(m))) {
    case link::submitted::queued:
      ++x.count.messages_out;
      return;
    case link::submitted::congested:
      return x.undeliverable(
          peer, wait, sender, mid, proxy,
          make_error(errc::congested,
                     l->where() + ": " + std::to_string(l->depth()) + " messages already queued"));
    case link::submitted::stopping:
      return x.undeliverable(
          peer, wait, sender, mid, proxy,
          make_error(errc::stopped, "node '" + x.params.node_name + "' is stopping"));
    case link::submitted::closed:
      return x.undeliverable(peer, wait, sender, mid, proxy, x.not_connected(peer));
  }
}

void exchange::place(const std::string& peer, std::uint64_t offset, buffer data,
                     const caf::strong_actor_ptr& notify) {
  std::weak_ptr<impl> me = impl_;
  auto tell = [me, notify, peer](caf::error why) {
    auto x = me.lock();
    if (x && notify)
      x->enqueue(notify, nullptr, caf::make_message_id(),
                 caf::make_message(undelivered_atom::value, peer, std::move(why)));
  };
  ++impl_->count.direct_writes;
  auto l = route_to(peer);
  if (!l) {
    ++impl_->count.undeliverable;
    return tell(impl_->not_connected(peer));
  }
  outbound_message m;
  m.has_envelope = false;
  m.writes.push_back({offset, std::move(data)});
  m.on_failure = [tell, peer](send_failure f, const std::string& why) {
    tell(make_error(errc_of(f), "node '" + peer + "': " + why));
  };
  if (impl_->submit(*l, std::move(m)) != link::submitted::queued) {
    ++impl_->count.undeliverable;
    tell(make_error(errc::congested, l->where() + ": queue full"));
  }
}

bool exchange::ask_name(const std::string& peer, std::uint64_t id, const std::string& name) {
  envelope e;
  e.kind = envelope_kind::resolve;
  e.request_id = id;
  e.body.assign(name.begin(), name.end());
  return impl_->send_control(peer, std::move(e));
}

// ---- tables ---------------------------------------------------------------------

bool exchange::publish(const std::string& name, const caf::strong_actor_ptr& who,
                       std::string interface) {
  if (!who)
    return false;
  impl_->exports.publish(name, who->id(), who, caf::actor_cast<caf::weak_actor_ptr>(who),
                         std::move(interface));
  impl_->keep_findable(who);
  std::weak_ptr<impl> me = impl_->shared_self;
  auto id = who->id();
  who->get()->attach_functor([me, id](const caf::error& reason) {
    if (auto x = me.lock())
      x->exported_exit(id, reason);
  });
  return true;
}

void exchange::guard(const caf::strong_actor_ptr& who, member_guard g) {
  if (!who)
    return;
  impl_->exports.guard(who->id(), std::move(g));
}

bool exchange::unpublish(const std::string& name) {
  std::uint64_t unkept = 0;
  if (!impl_->exports.unpublish(name, unkept))
    return false;
  if (unkept != 0)
    impl_->sys.registry().erase(unkept);
  return true;
}

caf::strong_actor_ptr exchange::published(const std::string& name, std::string* interface) const {
  auto p = impl_->exports.published(name);
  if (!p)
    return nullptr;
  if (interface)
    *interface = p->interface;
  return p->handle;
}

caf::strong_actor_ptr exchange::proxy_for(const std::string& peer, std::uint64_t id) {
  return impl_->handles.proxy_for(peer, id);
}

void exchange::tell_link(const std::string& peer, std::uint64_t remote_id,
                         const caf::strong_actor_ptr& linker, bool establish) {
  auto& x = *impl_;
  if (!linker || linker->node() != x.sys.node())
    return;  // only this node's actors link through a proxy of ours
  outbound_message m;
  m.env.kind = establish ? envelope_kind::link : envelope_kind::unlink;
  m.env.receiver = remote_id;
  m.env.sender = linker->id();
  // Called with both actors locked (CAF links in a critical section):
  // nothing here may lock an actor. The peer's proxy of `linker` asks us
  // to watch it (new_proxy's watch), which exports it.
  x.send_or_wait(peer, std::move(m));
}

void exchange::lose_peer(const std::string& peer, const caf::error& why) {
  auto& x = *impl_;
  auto waits = x.requests.take_all(peer);
  auto released = x.exports.forget_peer(peer);  // let go of outside its lock
  x.routes.drained(peer);
  for (auto& r : released)  // no connected peer knows them: findable no more
    x.sys.registry().erase(r->id());
  x.handles.lose(peer, why);
  for (auto& w : waits)
    x.fail_request(w, why);
  x.route_failed(peer, why);
}

void exchange::lose_all(const caf::error& why) {
  std::set<std::string> peers;
  for (auto& name : impl_->handles.peers())
    peers.insert(name);
  for (auto& name : impl_->awaiting_route.peers())
    peers.insert(name);
  for (auto& w : impl_->requests.take_all())
    impl_->fail_request(w, why);
  for (auto& p : peers)
    lose_peer(p, why);
}

void exchange::unreachable(const std::string& peer, const caf::error& why) {
  impl_->route_failed(peer, why);
}

bool exchange::congested(const std::string& peer) const {
  return impl_->routes.is_congested(peer);
}

void exchange::drained(const std::string& peer) {
  impl_->routes.drained(peer);
}

void exchange::clear() {
  auto exported = impl_->exports.clear();
  auto waits = impl_->requests.take_all();  // let go of last: their requesters are going
  for (auto id : exported)                  // what peers knew, findable until now
    impl_->sys.registry().erase(id);
  // While the actor system runs: killing a proxy tells its monitors.
  impl_->handles.clear();
  impl_->awaiting_route.clear();
  impl_->routes.clear();
  impl_->node = nullptr;
  impl_->directory = nullptr;
  // The I/O thread has stopped: what it had yet to run goes to the workers.
  if (impl_->executor)
    impl_->executor->hand_over();
}

std::vector<std::pair<std::string, std::string>> exchange::published_names() const {
  return impl_->exports.published_names();
}

std::size_t exchange::proxies() const {
  return impl_->handles.size();
}

latency_histogram exchange::request_latency() const {
  return impl_->requests.latency();
}

node_counters exchange::counters() const {
  auto& c = impl_->count;
  node_counters out;
  out.messages_out = c.messages_out;
  out.messages_in = c.messages_in;
  out.requests_out = c.requests_out;
  out.responses_in = c.responses_in;
  out.bytes_placed_out = c.bytes_placed_out;
  out.bytes_placed_in = c.bytes_placed_in;
  out.payload_copied_out = c.payload_copied_out;
  out.payload_copied_in = c.payload_copied_in;
  out.direct_writes = c.direct_writes;
  out.undeliverable = c.undeliverable;
  out.bad_inbound = c.bad_inbound;
  out.system_refused = c.system_refused;
  out.links_refused = c.links_refused;
  // Both sides of grants count their own.
  const auto& lent = impl_->lent.counters();
  const auto& held = impl_->holding.counters();
  out.thens_carried = lent.thens_carried;
  out.grant_bytes_out = lent.bytes_out + held.bytes_out;
  out.grant_bytes_in = lent.bytes_in + held.bytes_in;
  out.grants_fetched = held.fetched;
  out.grants_served = lent.served;
  out.payload_copied_in += lent.copied_in;
  out.bytes_placed_in += lent.copied_in;
  out.mailbox_enqueues = c.mailbox_enqueues;
  out.connection_enqueues = c.connection_enqueues;
  if (impl_->executor) {
    auto e = impl_->executor->stats();
    out.io_turns = e.turns;
    out.io_handed = e.handed;
    out.io_heavy = e.heavy;
  }
  if (impl_->loop) {
    auto l = impl_->loop->stats();
    out.io_wakes = l.wakes;
    out.io_doorbells = l.doorbells;
    out.io_spins = l.busy_polls;
  }
  out.proxies = proxies();
  out.exported = impl_->exports.exported();
  out.published = impl_->exports.published_count();
  return out;
}

}  // namespace riomesh::actors
