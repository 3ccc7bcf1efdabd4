// Remote memory grants over the exchange's links: the holder's side.
//
// A use goes out as a grant_use envelope (behind a write's bytes, on the
// same link), is kept in `uses` (grant_uses.hpp) until the owner's
// grant_status answers it, and its status goes to the actor that asked.
// A read where the connection reads one-sided, and an atomic, the holder
// does itself (exchange_fetches.cpp); elsewhere it maps its destination
// for the owner, waiting in `reads` while the owner's map slots are taken.
// `then`, the message the owner's actor gets once the bytes are in place:
// a write's or an atomic's rides on its grant_use when it is for an actor
// of the owner's node and fits in one envelope without placed buffers. A
// read's (the bytes land at the holder), and one too large to ride, the
// holder sends itself once the ok status came, an ordinary message in
// order with its others, at the price of the answer's round trip.
#include "exchange_impl.hpp"

#include <riomesh/actors/grants/grant_wire.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/make_message.hpp>

namespace riomesh::actors {

std::string about(const std::string& peer) {
  return "node '" + peer + "': ";
}

std::string too_many(const std::string& owner) {
  return about(owner) + std::to_string(max_grant_uses) +
         " uses of its grants are in flight already";
}

std::uint64_t exchange::next_grant_op() {
  return impl_->uses.next_op();
}

void exchange::grant_failed(std::uint64_t op, const caf::strong_actor_ptr& status_to,
                            grant_status st, const std::string& detail, bool atomic) {
  impl_->grant_failed(op, status_to, st, detail, atomic);
}

void exchange::impl::grant_failed(std::uint64_t op, const caf::strong_actor_ptr& status_to,
                                  grant_status st, const std::string& detail, bool atomic) {
  grant_wait w;
  w.status_to = status_to;
  w.atomic = atomic;
  grant_done(op, std::move(w), st, detail);
}

void exchange::impl::grant_done(std::uint64_t op, grant_wait w, grant_status st,
                                const std::string& detail, std::uint64_t value) {
  if (st == grant_status::ok) {
    count.grant_bytes_out += w.bytes_out;
    count.grant_bytes_in += w.bytes_in;
  }
  // `then` first: what the initiator sends once it hears goes behind it.
  if (st == grant_status::ok && w.then_to)
    enqueue(w.then_to, w.status_to, caf::make_message_id(), std::move(w.then));
  if (!w.status_to)
    return;
  enqueue(w.status_to, nullptr, caf::make_message_id(),
          w.atomic ? caf::make_message(grant_done_atom::value, op, st, detail, value)
                   : caf::make_message(grant_done_atom::value, op, st, detail));
}

void exchange::impl::carry_then(link& l, grant_request& r, outbound_message& m, grant_wait& w) {
  if (!w.then_to || w.then_to->node() != node_id_of(l.peer_name()))
    return;
  encoded_message enc;
  std::string error;
  if (!encode_message(sys, w.then, params.eager_threshold, enc, error, &codec) ||
      !enc.placed.empty())
    return;  // sent the ordinary way, which reports what fails
  auto size =
      (r.op == grant_op::compare_swap ? grant_swap_size : grant_request_size) + 8 + enc.body.size();
  if (size > l.peer_terms().max_body)
    return;
  if (w.status_to && w.status_to->node() == sys.node()) {
    m.env.sender = w.status_to->id();
    export_to(w.status_to, l.peer_name(), access::reach);
  }
  count.payload_copied_out += enc.copied;
  r.then_to = w.then_to->id();
  r.then_body = std::move(enc.body);
  w.then_to = nullptr;
  w.then = caf::message{};
}

// `m` (what goes ahead of it, if anything) with the grant_use envelope
// asking `r` of grant `id`; a link that refuses it ends the use at once.
void exchange::impl::send_use(link& l, std::uint64_t id, std::uint64_t op, const grant_request& r,
                              outbound_message m) {
  m.env.kind = envelope_kind::grant_use;
  m.env.receiver = id;
  m.env.request_id = op;
  m.env.body = encode(r);
  submit_use(l, op, std::move(m));
}

void exchange::impl::submit_use(link& l, std::uint64_t op, outbound_message m) {
  if (submit(l, std::move(m)) == link::submitted::queued)
    return;
  if (auto w = uses.take(op, l.id())) {
    if (w->into_map)
      l.unexpose(*w->into_map);
    grant_done(op, std::move(*w), grant_status::dropped,
               l.where() + ": its queue is full or it is closing");
  }
}

void exchange::write_granted(const grant& g, std::uint64_t op, std::uint64_t offset, buffer data,
                             const caf::strong_actor_ptr& status_to,
                             const caf::strong_actor_ptr& then_to, const caf::message& then) {
  auto& x = *impl_;
  if (auto no = check_claim(g, x.params.node_name, grant_op::write, offset, data.size()))
    return grant_failed(op, status_to, no->st, no->why);
  if (!g.once && g.map >= link::read_maps_from)
    return grant_failed(op, status_to, grant_status::refused,
                        "grant " + std::to_string(g.id) + " of node '" + g.owner +
                            "' has no map to write into: it is mapped for reading only");
  auto l = route_to(g.owner);
  if (!l)
    return grant_failed(op, status_to, grant_status::dropped,
                        "node '" + g.owner + "' is not connected");
  outbound_message m;
  grant_request r{grant_op::write, offset, data.size(), 0};
  grant_wait w{g.owner, l->id(), status_to, then_to, then, std::nullopt};
  w.bytes_out = data.size();
  x.carry_then(*l, r, m, w);
  if (!x.uses.add(op, std::move(w)))
    return grant_failed(op, status_to, grant_status::dropped, too_many(g.owner));
  auto length = data.size();
  if (g.once) {
    // Its bytes go with the claim, into the owner's arena like a message's.
    r.carried = true;
    if (length > 0)
      m.placed.push_back(std::move(data));
  } else if (length > 0) {
    m.writes.push_back({g.map + offset, std::move(data)});
  }
  std::weak_ptr<impl> me = x.shared_self;
  auto link_id = l->id();
  // No map at the owner any more: it took the grant back (or it was used
  // once) before these bytes went. Said in the grant's terms: the map's
  // offset is the connection's, not the user's.
  auto revoked = "grant " + std::to_string(g.id) + " of node '" + g.owner +
                 "': no map at the owner for the write of " + std::to_string(length) +
                 " bytes at its offset " + std::to_string(offset) +
                 " (revoked, used up, or past the grant's end)";
  auto owner = g.owner;
  m.on_failure = [me, op, link_id, owner, revoked](send_failure f, const std::string& why) {
    auto x = me.lock();
    if (!x)
      return;
    if (auto w = x->uses.take(op, link_id))
      x->grant_done(op, std::move(*w),
                    f == send_failure::not_mapped ? grant_status::revoked : grant_status::dropped,
                    f == send_failure::not_mapped ? revoked : about(owner) + why);
  };
  x.send_use(*l, g.id, op, r, std::move(m));
}

void exchange::read_granted(link& l, const grant& g, std::uint64_t op, std::uint64_t offset,
                            buffer into, const caf::strong_actor_ptr& status_to,
                            const caf::strong_actor_ptr& then_to, const caf::message& then) {
  auto& x = *impl_;
  if (auto no = check_claim(g, x.params.node_name, grant_op::read, offset, into.size()))
    return grant_failed(op, status_to, no->st, no->why);
  if (g.one_sided && l.reads_one_sided() && !into.empty()) {
    direct_fetch f;
    f.op = direct_fetch::kind::read;
    f.offset = g.map + offset;
    f.into = std::move(into);
    auto length = f.into.size();
    grant_wait w{g.owner, l.id(), status_to, then_to, then, std::nullopt};
    w.bytes_in = length;
    return x.fetch_granted(l, g, op, {grant_op::read, offset, length, 0}, std::move(f),
                           std::move(w));
  }
  parked_read read{g, op, offset, into, status_to, then_to, then};
  // Behind reads that wait already: in order.
  if (x.reads.waiting(l.id()) && !x.unparking) {
    if (!x.reads.push_back(l.id(), std::move(read)))
      return grant_failed(op, status_to, grant_status::dropped, too_many(g.owner));
    return;
  }
  std::optional<std::uint64_t> dest;
  if (!into.empty()) {
    std::uint64_t map = 0;
    std::string error;
    if (l.finished())
      return grant_failed(op, status_to, grant_status::dropped,
                          l.where() + ": the connection ended before the read could go");
    if (!l.expose(into, map, error)) {
      // The peer's map slots are taken, by our own reads among others:
      // wait for one of those to end.
      if (x.uses.reads_in_flight(l.id()) > 0 && x.reads.push_front(l.id(), std::move(read)))
        return;
      return grant_failed(op, status_to, grant_status::refused,
                          "cannot map the destination for node '" + g.owner + "': " + error);
    }
    dest = map;
  }
  grant_wait w{g.owner, l.id(), status_to, then_to, then, dest};
  w.bytes_in = into.size();
  if (!x.uses.add(op, std::move(w))) {
    if (dest)
      l.unexpose(*dest);
    return grant_failed(op, status_to, grant_status::dropped, too_many(g.owner));
  }
  x.send_use(l, g.id, op, {grant_op::read, offset, into.size(), dest.value_or(0)}, {});
}

void exchange::atomic_granted(const grant& g, std::uint64_t op, grant_op kind, std::uint64_t offset,
                              std::uint64_t a, std::uint64_t b,
                              const caf::strong_actor_ptr& status_to,
                              const caf::strong_actor_ptr& then_to, const caf::message& then) {
  auto& x = *impl_;
  if (auto no = check_claim(g, x.params.node_name, kind, offset, 8))
    return grant_failed(op, status_to, no->st, no->why, true);
  if (g.one_sided && g.map >= link::read_maps_from)
    return grant_failed(op, status_to, grant_status::refused,
                        "grant " + std::to_string(g.id) + " of node '" + g.owner +
                            "' is mapped for reading only: no atomics on it",
                        true);
  auto l = route_to(g.owner);
  if (!l)
    return grant_failed(op, status_to, grant_status::dropped,
                        "node '" + g.owner + "' is not connected", true);
  grant_request r{kind, offset, 8, a, b};
  grant_wait w{g.owner, l->id(), status_to, then_to, then, std::nullopt, true};
  if (g.one_sided && l->reads_one_sided()) {
    direct_fetch f;
    f.op = kind == grant_op::fetch_add ? direct_fetch::kind::fetch_add
                                       : direct_fetch::kind::compare_swap;
    f.offset = g.map + offset;
    f.a = a;
    f.b = b;
    return x.fetch_granted(*l, g, op, r, std::move(f), std::move(w));
  }
  outbound_message m;
  x.carry_then(*l, r, m, w);
  if (!x.uses.add(op, std::move(w)))
    return grant_failed(op, status_to, grant_status::dropped, too_many(g.owner), true);
  x.send_use(*l, g.id, op, r, std::move(m));
}

void exchange::impl::grant_answered(link& l, const envelope& in) {
  const auto& peer = l.peer_name();
  std::string error;
  auto a = decode_grant_answer(in.body, error);
  if (!a)
    return misbehaved(l, error);
  auto w = uses.take(in.request_id, l.id());
  if (!w)
    return misbehaved(l, "a grant status for operation " + std::to_string(in.request_id) +
                             ", which this node did not ask it for");
  // A read's bytes are in place (they came ahead of this): the owner may
  // not write there any more, and a read waiting for the map slot may go.
  if (w->into_map) {
    l.unexpose(*w->into_map);
    unpark_read(l);
  }
  auto value = w->one_sided ? w->fetched : in.receiver;
  grant_done(in.request_id, std::move(*w), a->st,
             a->detail.empty() ? std::string{} : about(peer) + config::printable(a->detail), value);
}

// As many as now find a slot, oldest first; one that does not goes back to
// the front and waits for the next read to end.
void exchange::impl::unpark_read(link& l) {
  auto x = owner.lock();
  if (!x)
    return;
  unparking = true;
  while (auto r = reads.pop_front(l.id())) {
    auto before = reads.size(l.id());
    x->read_granted(l, r->g, r->op, r->offset, std::move(r->into), r->status_to, r->then_to,
                    r->then);
    if (reads.size(l.id()) > before)
      break;
  }
  unparking = false;
}

void exchange::impl::grants_closed(link& l, const std::string& reason) {
  for (auto& r : reads.drop_link(l.id())) {
    grant_wait w;
    w.status_to = r.status_to;
    grant_done(r.op, std::move(w), grant_status::dropped,
               about(r.g.owner) + "the connection ended before the read could go: " + reason);
  }
  {
    std::lock_guard<std::mutex> guard(given_lock);
    given.drop_link(l.id());  // their maps went with the connection
  }
  for (auto& [op, w] : uses.drop_link(l.id())) {
    auto detail = about(w.owner) + "the connection ended before it answered: " + reason;
    grant_done(op, std::move(w), grant_status::dropped, detail);
  }
}

}  // namespace riomesh::actors
