// `then`, the message the owner's actor gets once the bytes are in place:
// a write's or an atomic's rides on its grant_use when it is for an actor
// of the owner's node and fits in one envelope without placed buffers
// (grant_port::carry_then). A read's (the bytes land at the holder), and
// one too large to ride, the holder sends itself once the ok status came,
// an ordinary message in order with its others, at the price of the
// answer's round trip.
#include <riomesh/actors/grants/grant_holder.hpp>

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/config/text.hpp>

#include <caf/make_message.hpp>

namespace riomesh::actors {

std::string grant_holder::about(const std::string& owner) {
  return "node '" + owner + "': ";
}

std::string grant_holder::too_many(const std::string& owner) {
  return about(owner) + std::to_string(max_grant_uses) +
         " uses of its grants are in flight already";
}

void grant_holder::failed(std::uint64_t op, const caf::strong_actor_ptr& status_to, grant_status st,
                          const std::string& detail, bool atomic) {
  grant_wait w;
  w.status_to = status_to;
  w.atomic = atomic;
  done(op, std::move(w), st, detail);
}

void grant_holder::done(std::uint64_t op, grant_wait w, grant_status st, const std::string& detail,
                        std::uint64_t value) {
  if (st == grant_status::ok) {
    count_.bytes_out += w.bytes_out;
    count_.bytes_in += w.bytes_in;
  }
  // `then` first: what the initiator sends once it hears goes behind it.
  if (st == grant_status::ok && w.then_to)
    port_.enqueue(w.then_to, w.status_to, std::move(w.then));
  if (!w.status_to)
    return;
  port_.enqueue(w.status_to, nullptr,
                w.atomic ? caf::make_message(grant_done_atom::value, op, st, detail, value)
                         : caf::make_message(grant_done_atom::value, op, st, detail));
}

failure_callback grant_holder::use_failure(std::uint64_t op, std::uint64_t link,
                                           const std::string& owner, std::string not_mapped) {
  return [alive = port_.lifetime(), self = this, op, link, owner,
          not_mapped = std::move(not_mapped)](send_failure why, const std::string& detail) {
    auto port = alive.lock();  // and with it this side
    if (!port)
      return;
    auto w = self->uses_.take(op, link);
    if (!w)
      return;
    // No map at the owner: it took the grant back (or it was used once).
    auto st = why == send_failure::not_mapped ? grant_status::revoked
              : why == send_failure::past_map ? grant_status::out_of_range
              : why == send_failure::misfit   ? grant_status::refused
                                              : grant_status::dropped;
    self->done(op, std::move(*w), st,
               why == send_failure::not_mapped && !not_mapped.empty() ? not_mapped
                                                                      : about(owner) + detail);
  };
}

void grant_holder::send_use(link& l, std::uint64_t id, std::uint64_t op, const grant_request& r,
                            outbound_message m) {
  m.env.kind = envelope_kind::grant_use;
  m.env.receiver = id;
  m.env.request_id = op;
  m.env.body = encode(r);
  submit_use(l, op, std::move(m));
}

void grant_holder::submit_use(link& l, std::uint64_t op, outbound_message m) {
  if (port_.submit(l, std::move(m)) == link::submitted::queued)
    return;
  if (auto w = uses_.take(op, l.id())) {
    if (w->into_map)
      l.unexpose(*w->into_map);
    done(op, std::move(*w), grant_status::dropped,
         l.where() + ": its queue is full or it is closing");
  }
}

void grant_holder::write(const grant& g, std::uint64_t op, std::uint64_t offset, buffer data,
                         const caf::strong_actor_ptr& status_to,
                         const caf::strong_actor_ptr& then_to, const caf::message& then) {
  if (auto no = check_claim(g, node_name_, grant_op::write, offset, data.size()))
    return failed(op, status_to, no->st, no->why);
  if (!g.once && g.map >= link::read_maps_from)
    return failed(op, status_to, grant_status::refused,
                  "grant " + std::to_string(g.id) + " of node '" + g.owner +
                      "' has no map to write into: it is mapped for reading only");
  auto l = port_.route_to(g.owner);
  if (!l)
    return failed(op, status_to, grant_status::dropped, "node '" + g.owner + "' is not connected");
  outbound_message m;
  grant_request r{grant_op::write, offset, data.size(), 0};
  grant_wait w{g.owner, l->id(), status_to, then_to, then, std::nullopt};
  w.bytes_out = data.size();
  port_.carry_then(*l, r, m, w);
  if (!uses_.add(op, std::move(w)))
    return failed(op, status_to, grant_status::dropped, too_many(g.owner));
  auto length = data.size();
  if (g.once) {
    // Its bytes go with the claim, into the owner's arena like a message's.
    r.carried = true;
    if (length > 0)
      m.placed.push_back(std::move(data));
  } else if (length > 0) {
    m.writes.push_back({g.map + offset, std::move(data)});
  }
  auto link_id = l->id();
  // No map at the owner any more: it took the grant back (or it was used
  // once) before these bytes went. Said in the grant's terms: the map's
  // offset is the connection's, not the user's.
  auto revoked = "grant " + std::to_string(g.id) + " of node '" + g.owner +
                 "': no map at the owner for the write of " + std::to_string(length) +
                 " bytes at its offset " + std::to_string(offset) +
                 " (revoked, used up, or past the grant's end)";
  m.on_failure = use_failure(op, link_id, g.owner, revoked);
  send_use(*l, g.id, op, r, std::move(m));
}

void grant_holder::read(link& l, const grant& g, std::uint64_t op, std::uint64_t offset,
                        buffer into, const caf::strong_actor_ptr& status_to,
                        const caf::strong_actor_ptr& then_to, const caf::message& then) {
  if (auto no = check_claim(g, node_name_, grant_op::read, offset, into.size()))
    return failed(op, status_to, no->st, no->why);
  if (g.one_sided && l.reads_one_sided() && !into.empty()) {
    direct_fetch f;
    f.op = direct_fetch::kind::read;
    f.offset = g.map + offset;
    f.into = std::move(into);
    auto length = f.into.size();
    grant_wait w{g.owner, l.id(), status_to, then_to, then, std::nullopt};
    w.bytes_in = length;
    return fetch(l, g, op, {grant_op::read, offset, length, 0}, std::move(f), std::move(w));
  }
  parked_read waiting{g, op, offset, into, status_to, then_to, then};
  // Behind reads that wait already: in order.
  if (reads_.waiting(l.id()) && !unparking_) {
    if (!reads_.push_back(l.id(), std::move(waiting)))
      return failed(op, status_to, grant_status::dropped, too_many(g.owner));
    return;
  }
  std::optional<std::uint64_t> dest;
  if (!into.empty()) {
    std::uint64_t map = 0;
    std::string error;
    if (l.finished())
      return failed(op, status_to, grant_status::dropped,
                    l.where() + ": the connection ended before the read could go");
    if (!l.expose(into, map, error)) {
      // The peer's map slots are taken, by our own reads among others:
      // wait for one of those to end.
      if (uses_.reads_in_flight(l.id()) > 0 && reads_.push_front(l.id(), std::move(waiting)))
        return;
      return failed(op, status_to, grant_status::refused,
                    "cannot map the destination for node '" + g.owner + "': " + error);
    }
    dest = map;
  }
  grant_wait w{g.owner, l.id(), status_to, then_to, then, dest};
  w.bytes_in = into.size();
  if (!uses_.add(op, std::move(w))) {
    if (dest)
      l.unexpose(*dest);
    return failed(op, status_to, grant_status::dropped, too_many(g.owner));
  }
  send_use(l, g.id, op, {grant_op::read, offset, into.size(), dest.value_or(0)}, {});
}

void grant_holder::atomic(const grant& g, std::uint64_t op, grant_op kind, std::uint64_t offset,
                          std::uint64_t a, std::uint64_t b, const caf::strong_actor_ptr& status_to,
                          const caf::strong_actor_ptr& then_to, const caf::message& then) {
  if (auto no = check_claim(g, node_name_, kind, offset, 8))
    return failed(op, status_to, no->st, no->why, true);
  if (g.one_sided && g.map >= link::read_maps_from)
    return failed(op, status_to, grant_status::refused,
                  "grant " + std::to_string(g.id) + " of node '" + g.owner +
                      "' is mapped for reading only: no atomics on it",
                  true);
  auto l = port_.route_to(g.owner);
  if (!l)
    return failed(op, status_to, grant_status::dropped, "node '" + g.owner + "' is not connected",
                  true);
  grant_request r{kind, offset, 8, a, b};
  grant_wait w{g.owner, l->id(), status_to, then_to, then, std::nullopt, true};
  if (g.one_sided && l->reads_one_sided()) {
    direct_fetch f;
    f.op = kind == grant_op::fetch_add ? direct_fetch::kind::fetch_add
                                       : direct_fetch::kind::compare_swap;
    f.offset = g.map + offset;
    f.a = a;
    f.b = b;
    return fetch(*l, g, op, r, std::move(f), std::move(w));
  }
  outbound_message m;
  port_.carry_then(*l, r, m, w);
  if (!uses_.add(op, std::move(w)))
    return failed(op, status_to, grant_status::dropped, too_many(g.owner), true);
  send_use(*l, g.id, op, r, std::move(m));
}

void grant_holder::answered(link& l, const envelope& in) {
  std::string error;
  auto a = decode_grant_answer(in.body, error);
  if (!a)
    return port_.misbehaved(l, error);
  auto w = uses_.take(in.request_id, l.id());
  if (!w)
    return port_.misbehaved(l, "a grant status for operation " + std::to_string(in.request_id) +
                                   ", which this node did not ask it for");
  // A read's bytes are in place (they came ahead of this): the owner may
  // not write there any more, and a read waiting for the map slot may go.
  if (w->into_map) {
    l.unexpose(*w->into_map);
    unpark_read(l);
  }
  auto value = w->one_sided ? w->fetched : in.receiver;
  done(in.request_id, std::move(*w), a->st,
       a->detail.empty() ? std::string{} : about(l.peer_name()) + config::printable(a->detail),
       value);
}

// As many as now find a slot, oldest first; one that does not goes back to
// the front and waits for the next read to end.
void grant_holder::unpark_read(link& l) {
  unparking_ = true;
  while (auto r = reads_.pop_front(l.id())) {
    auto before = reads_.size(l.id());
    read(l, r->g, r->op, r->offset, std::move(r->into), r->status_to, r->then_to, r->then);
    if (reads_.size(l.id()) > before)
      break;
  }
  unparking_ = false;
}

void grant_holder::link_closed(link& l, const std::string& reason) {
  for (auto& r : reads_.drop_link(l.id())) {
    grant_wait w;
    w.status_to = r.status_to;
    done(r.op, std::move(w), grant_status::dropped,
         about(r.g.owner) + "the connection ended before the read could go: " + reason);
  }
  for (auto& [op, w] : uses_.drop_link(l.id())) {
    auto detail = about(w.owner) + "the connection ended before it answered: " + reason;
    done(op, std::move(w), grant_status::dropped, detail);
  }
}

}  // namespace riomesh::actors
