// Remote memory grants over the exchange's links.
//
// A write: the holder's bytes go into the owner's map of the region (an
// RDMA write into a window bound to the holder's connection, or a tcp
// placement the owner checks against its maps), then, on the same link and
// so after them, a grant_use envelope. The owner judges the use (its
// grant table), takes a use-once grant's map down, and answers with a
// grant_status envelope.
// A read: where the connection reads one-sided, the holder reads the
// owner's map itself, as it runs atomics (exchange_fetches.cpp).
// Elsewhere the holder maps its destination for the owner and asks; the
// owner, if the grant allows it, writes the bytes there from where they
// lie and answers behind them, and runs atomics with its CPU's.
// `then`, the message the owner's actor gets once the bytes are in place:
// a write's or an atomic's rides on its grant_use when it is for an actor
// of the owner's node and fits in one envelope without placed buffers; the
// owner delivers it on an ok verdict, so it costs no round trip. A read's
// (the bytes land at the holder), and one too large to ride, the holder
// sends itself once the ok status came, an ordinary message in order with
// its others, at the price of the answer's round trip.
#include "exchange_impl.hpp"

#include <riomesh/actors/grants/grant_wire.hpp>
#include <riomesh/config/text.hpp>
#include <riomesh/log.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/make_message.hpp>

#include <cstring>

namespace riomesh::actors {

std::string about(const std::string& peer) {
  return "node '" + peer + "': ";
}

std::string too_many(const std::string& owner) {
  return about(owner) + std::to_string(max_grant_uses) +
         " uses of its grants are in flight already";
}

namespace {

// A use-once write's bytes, from where they arrived into the region: the
// one copy such a write costs (the region may be gathered; so may they).
void copy_into(buffer& to, const buffer& from) {
  auto into = to.gathered() ? to.pieces() : std::vector<buffer>{to};
  auto src = from.gathered() ? from.pieces() : std::vector<buffer>{from};
  std::size_t i = 0, at = 0;
  for (auto& piece : into)
    for (std::size_t done = 0; done < piece.size() && i < src.size();) {
      auto n = std::min(piece.size() - done, src[i].size() - at);
      std::memcpy(piece.data() + done, src[i].data() + at, n);
      done += n;
      at += n;
      if (at == src[i].size()) {
        ++i;
        at = 0;
      }
    }
}

// On this thread, with the CPU's own atomics: atomic against the owner's
// actors' atomics on the same word too (verbs atomics on rxe are not).
std::uint64_t apply_atomic(const grant_request& r, buffer& word) {
  auto* p = reinterpret_cast<std::uint64_t*>(word.data());
  if (r.op == grant_op::fetch_add)
    return __atomic_fetch_add(p, r.destination, __ATOMIC_SEQ_CST);
  auto expected = r.destination;
  __atomic_compare_exchange_n(p, &expected, r.swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;  // the word as it was, swapped or not
}

}  // namespace

// ---- the owner ----------------------------------------------------------------

std::optional<grant> exchange::lend(link& l, buffer region, std::uint8_t rights, bool once,
                                    std::string& error) {
  auto& x = *impl_;
  if (region.empty()) {
    error = "an empty buffer";
    return std::nullopt;
  }
  if (rights == 0 || (rights & ~static_cast<std::uint8_t>(grant_rights::read_write)) != 0) {
    error = "rights " + std::to_string(rights) + " (read 1, write 2, both 3)";
    return std::nullopt;
  }
  granted g;
  g.holder = l.peer_name();
  g.link = l.id();
  g.region = region;
  g.rights = rights;
  g.once = once;
  // The region is mapped for what the holder may do to it without this
  // node's CPU: write, and where the connection reads one-sided, read and
  // (with both rights) run atomics. Elsewhere a region it may only read
  // is not mapped at all: the owner writes it out itself, and no key to
  // it leaves this node.
  namespace access = channels::map_access;
  // A use-once grant is never mapped for the holder: whatever the holder
  // could do through a map it could do twice. This node performs its one
  // use (writes what the claim brings, writes out what is read, runs the
  // atomic) once it has judged it.
  bool one_sided = l.reads_one_sided() && !once;
  std::uint8_t can =
      (rights & static_cast<std::uint8_t>(grant_rights::write)) && !once ? access::write : 0;
  if (one_sided && (rights & static_cast<std::uint8_t>(grant_rights::read)))
    can |= access::read;
  if (one_sided && rights == static_cast<std::uint8_t>(grant_rights::read_write))
    can |= access::atomic;
  std::uint64_t map = 0;
  bool mapped = can == 0 || l.expose(region, map, error, can);
  if (!mapped && (can & access::read)) {
    // The holder's table of maps is full (channel.iomap_size), or the
    // region cannot be registered for reading: the owner serves its
    // reads, as where they are not one-sided, and maps it for writing
    // only if it may be written.
    can &= access::write;
    one_sided = false;
    mapped = can == 0 || l.expose(region, map, error, can);
  }
  if (!mapped)
    return std::nullopt;
  if (can != 0)
    g.map = map;
  grant out;
  out.owner = x.params.node_name;
  out.holder = g.holder;
  out.length = region.size();
  out.map = g.map.value_or(0);
  out.rights = rights;
  out.once = once;
  out.one_sided = one_sided;
  std::lock_guard<std::mutex> guard(x.grants_lock);
  out.id = x.given.add(std::move(g));
  return out;
}

std::optional<granted> exchange::take_back(std::uint64_t id) {
  std::lock_guard<std::mutex> guard(impl_->grants_lock);
  return impl_->given.revoke(id);
}

void exchange::impl::answer_use(link& l, std::uint64_t op, grant_status st,
                                const std::string& detail, std::uint64_t value) {
  outbound_message m;
  m.env.kind = envelope_kind::grant_status;
  m.env.request_id = op;
  m.env.receiver = value;
  m.env.body = encode(grant_answer{st, detail});
  submit(l, std::move(m));
}

void exchange::impl::use_granted(link& l, inbound_message& m) {
  const auto& in = m.env;
  const auto& peer = l.peer_name();
  std::string error;
  auto r = decode_grant_request(in.body, error);
  if (r && r->carried && r->length > 0 && m.placed.empty())
    error = "a grant write that says it brings its bytes, and brings none";
  else if (r && (!r->carried || r->length == 0) && !m.placed.empty())
    error = "a grant use with a buffer, not a write bringing its bytes";
  else if (r && r->carried && r->length > 0 && m.placed[0].size() != r->length)
    error = "a grant write of " + std::to_string(r->length) + " bytes bringing " +
            std::to_string(m.placed[0].size());
  if (!r || !error.empty()) {
    misbehaved(l, error);
    return answer_use(l, in.request_id, grant_status::refused, error);
  }
  grant_verdict v;
  {
    std::lock_guard<std::mutex> guard(grants_lock);
    v = given.use(in.receiver, peer, l.id(), r->op, r->offset, r->length, r->carried);
  }
  if (v.unmap)
    l.unexpose(*v.unmap);
  if (v.st == grant_status::refused || v.st == grant_status::out_of_range)
    misbehaved(l, v.why);  // our own holders check first: this is a peer that does not
  if (r->done)
    return judge_done(l, in, *r, v);
  if (v.st == grant_status::ok && r->op != grant_op::read) {
    // A write's bytes came ahead of this, or with it (use-once: put in
    // place here, once); an atomic's word changes here. Then its `then`,
    // if it rode along: it finds them in place.
    std::uint64_t old = 0;
    if (is_atomic(r->op)) {
      old = apply_atomic(*r, v.slice);
      ++count.grants_served;
    } else if (r->carried && r->length > 0) {
      copy_into(v.slice, m.placed[0]);
      count.payload_copied_in += r->length;
      count.bytes_placed_in += r->length;
      ++count.grants_served;
    }
    if (!is_atomic(r->op))  // came ahead, by RDMA write or the I/O thread's
      count.grant_bytes_in += r->length;
    deliver_then(l, in, *r);
    return answer_use(l, in.request_id, v.st, v.why, old);
  }
  if (v.st != grant_status::ok || r->length == 0)
    return answer_use(l, in.request_id, v.st, v.why);
  ++count.grants_served;
  count.grant_bytes_out += r->length;
  outbound_message out;
  out.writes.push_back({r->destination, std::move(v.slice)});
  out.env.kind = envelope_kind::grant_status;
  out.env.request_id = in.request_id;
  out.env.body = encode(grant_answer{grant_status::ok, {}});
  std::weak_ptr<impl> me = shared_self;
  std::weak_ptr<link> on = l.shared_from_this();
  auto op = in.request_id;
  // Only a destination the holder has not mapped stops it here: the link's
  // end the holder hears of by itself.
  out.on_failure = [me, on, op](send_failure f, const std::string& why) {
    auto x = me.lock();
    auto l = on.lock();
    if (x && l && f == send_failure::not_mapped)
      x->answer_use(*l, op, grant_status::remote_error, why);
  };
  // Congested, the holder hears nothing until the connection ends: its
  // reads are bounded by what it keeps in flight (max_grant_uses).
  if (submit(l, std::move(out)) == link::submitted::congested)
    logging::warn(params.node_name, {"grant_read_dropped",
                                     peer,
                                     {},
                                     "a read of a grant by node '" + peer +
                                         "' is dropped: its connection's queue is full"});
}

// The holder read or ran its atomic already, through the map the grant
// gave it; this judges the claim all the same (a use-once grant ends
// here) and delivers the `then` only on an ok verdict. The status is the
// verdict: an ok one tells the holder its `then` went.
void exchange::impl::judge_done(link& l, const envelope& in, grant_request& r,
                                const grant_verdict& v) {
  if (v.st == grant_status::ok && r.op == grant_op::read)
    count.grant_bytes_out += r.length;  // read one-sided from our memory
  if (v.st == grant_status::ok)
    deliver_then(l, in, r);
  answer_use(l, in.request_id, v.st, v.why);
}

void exchange::impl::deliver_then(link& l, const envelope& in, grant_request& r) {
  if (r.then_to == 0)
    return;
  inbound_message then;
  then.env.kind = envelope_kind::message;
  then.env.sender = in.sender;
  then.env.receiver = r.then_to;
  then.env.body = std::move(r.then_body);
  ++count.thens_carried;
  deliver(l, then);
}

// ---- the holder ---------------------------------------------------------------

std::uint64_t exchange::next_grant_op() {
  return impl_->next_grant_op++;
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

bool exchange::impl::add_wait(std::uint64_t op, grant_wait w) {
  std::lock_guard<std::mutex> guard(grants_lock);
  auto& n = grant_uses_on[w.link];
  if (n >= max_grant_uses)
    return false;
  ++n;
  grant_waits.emplace(op, std::move(w));
  return true;
}

std::optional<grant_wait> exchange::impl::take_wait(std::uint64_t op, std::uint64_t link) {
  std::lock_guard<std::mutex> guard(grants_lock);
  auto it = grant_waits.find(op);
  if (it == grant_waits.end() || it->second.link != link)
    return std::nullopt;
  auto w = std::move(it->second);
  grant_waits.erase(it);
  if (auto n = grant_uses_on.find(link); n != grant_uses_on.end() && --n->second == 0)
    grant_uses_on.erase(n);
  return w;
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
  if (auto w = take_wait(op, l.id())) {
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
  if (!x.add_wait(op, std::move(w)))
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
    if (auto w = x->take_wait(op, link_id))
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
  auto& parked = x.parked_reads[l.id()];
  // Behind reads that wait already: in order.
  if (!parked.empty() && !x.unparking) {
    if (parked.size() >= max_grant_uses)
      return grant_failed(op, status_to, grant_status::dropped, too_many(g.owner));
    parked.push_back(std::move(read));
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
      if (x.reads_in_flight(l.id()) > 0 && parked.size() < max_grant_uses) {
        parked.push_front(std::move(read));
        return;
      }
      return grant_failed(op, status_to, grant_status::refused,
                          "cannot map the destination for node '" + g.owner + "': " + error);
    }
    dest = map;
  }
  grant_wait w{g.owner, l.id(), status_to, then_to, then, dest};
  w.bytes_in = into.size();
  if (!x.add_wait(op, std::move(w))) {
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
  if (!x.add_wait(op, std::move(w)))
    return grant_failed(op, status_to, grant_status::dropped, too_many(g.owner), true);
  x.send_use(*l, g.id, op, r, std::move(m));
}

void exchange::impl::grant_answered(link& l, const envelope& in) {
  const auto& peer = l.peer_name();
  std::string error;
  auto a = decode_grant_answer(in.body, error);
  if (!a)
    return misbehaved(l, error);
  auto w = take_wait(in.request_id, l.id());
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

std::size_t exchange::impl::reads_in_flight(std::uint64_t link) {
  std::lock_guard<std::mutex> guard(grants_lock);
  std::size_t n = 0;
  for (const auto& [op, w] : grant_waits)
    n += w.link == link && w.into_map ? 1 : 0;
  return n;
}

// As many as now find a slot, oldest first; one that does not goes back to
// the front and waits for the next read to end.
void exchange::impl::unpark_read(link& l) {
  auto x = owner.lock();
  auto it = parked_reads.find(l.id());
  if (!x || it == parked_reads.end())
    return;
  auto& parked = it->second;
  unparking = true;
  while (!parked.empty()) {
    auto r = std::move(parked.front());
    parked.pop_front();
    auto before = parked.size();
    x->read_granted(l, r.g, r.op, r.offset, std::move(r.into), r.status_to, r.then_to, r.then);
    if (parked.size() > before)
      break;
  }
  unparking = false;
}

void exchange::impl::grants_closed(link& l, const std::string& reason) {
  if (auto it = parked_reads.find(l.id()); it != parked_reads.end()) {
    auto parked = std::move(it->second);
    parked_reads.erase(it);
    for (auto& r : parked) {
      grant_wait w;
      w.status_to = r.status_to;
      grant_done(r.op, std::move(w), grant_status::dropped,
                 about(r.g.owner) + "the connection ended before the read could go: " + reason);
    }
  }
  std::vector<std::pair<std::uint64_t, grant_wait>> ended;
  {
    std::lock_guard<std::mutex> guard(grants_lock);
    given.drop_link(l.id());  // their maps went with the connection
    grant_uses_on.erase(l.id());
    for (auto it = grant_waits.begin(); it != grant_waits.end();) {
      if (it->second.link == l.id()) {
        ended.emplace_back(it->first, std::move(it->second));
        it = grant_waits.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& [op, w] : ended) {
    auto detail = about(w.owner) + "the connection ended before it answered: " + reason;
    grant_done(op, std::move(w), grant_status::dropped, detail);
  }
}

}  // namespace riomesh::actors
