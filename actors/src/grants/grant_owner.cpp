// A write: the holder's bytes go into the owner's map of the region (an
// RDMA write into a window bound to the holder's connection, or a tcp
// placement the owner checks against its maps), then, on the same link and
// so after them, a grant_use envelope. The owner judges the use, takes a
// use-once grant's map down, and answers with a grant_status envelope.
// A read where the connection does not read one-sided: the holder maps
// its destination for the owner and asks; the owner, if the grant allows
// it, writes the bytes there from where they lie and answers behind them.
#include <riomesh/actors/grants/grant_owner.hpp>

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/grants/grant_wire.hpp>
#include <riomesh/log.hpp>

#include <cstring>

namespace riomesh::actors {

namespace {

// A use-once write's bytes, from where they arrived into the region (the
// region may be gathered; so may they).
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

// What a use's claim says of the bytes it brings that cannot be: empty if
// nothing.
std::string bad_carriage(const grant_request& r, const inbound_message& m) {
  if (r.carried && r.length > 0 && m.placed.empty())
    return "a grant write that says it brings its bytes, and brings none";
  if ((!r.carried || r.length == 0) && !m.placed.empty())
    return "a grant use with a buffer, not a write bringing its bytes";
  if (r.carried && r.length > 0 && m.placed[0].size() != r.length)
    return "a grant write of " + std::to_string(r.length) + " bytes bringing " +
           std::to_string(m.placed[0].size());
  return {};
}

}  // namespace

std::optional<grant> grant_owner::lend(link& l, buffer region, std::uint8_t rights, bool once,
                                       std::string& error) {
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
  out.owner = node_name_;
  out.holder = g.holder;
  out.length = region.size();
  out.map = g.map.value_or(0);
  out.rights = rights;
  out.once = once;
  out.one_sided = one_sided;
  std::lock_guard<std::mutex> guard(lock_);
  out.id = given_.add(std::move(g));
  return out;
}

std::optional<granted> grant_owner::take_back(std::uint64_t id) {
  std::lock_guard<std::mutex> guard(lock_);
  return given_.revoke(id);
}

void grant_owner::link_closed(link& l) {
  std::lock_guard<std::mutex> guard(lock_);
  given_.drop_link(l.id());  // their maps went with the connection
}

std::size_t grant_owner::size() const {
  std::lock_guard<std::mutex> guard(lock_);
  return given_.size();
}

void grant_owner::answer(link& l, std::uint64_t op, grant_status st, const std::string& detail,
                         std::uint64_t value) {
  outbound_message m;
  m.env.kind = envelope_kind::grant_status;
  m.env.request_id = op;
  m.env.receiver = value;
  m.env.body = encode(grant_answer{st, detail});
  port_.submit(l, std::move(m));
}

void grant_owner::used(link& l, inbound_message& m) {
  const auto& in = m.env;
  std::string error;
  auto r = decode_grant_request(in.body, error);
  if (r)
    error = bad_carriage(*r, m);
  if (!r || !error.empty()) {
    port_.misbehaved(l, error);
    return answer(l, in.request_id, grant_status::refused, error);
  }
  grant_verdict v;
  {
    std::lock_guard<std::mutex> guard(lock_);
    v = given_.use(in.receiver, l.peer_name(), l.id(), r->op, r->offset, r->length, r->carried);
  }
  if (v.unmap)
    l.unexpose(*v.unmap);
  if (v.st == grant_status::refused || v.st == grant_status::out_of_range)
    port_.misbehaved(l, v.why);  // our own holders check first: this is a peer that does not
  if (r->done)
    return judge_done(l, in, *r, v);
  if (v.st == grant_status::ok && r->op != grant_op::read) {
    // A write's bytes came ahead of this, or with it (use-once: put in
    // place here, once); an atomic's word changes here. Then its `then`,
    // if it rode along: it finds them in place.
    std::uint64_t old = 0;
    if (is_atomic(r->op)) {
      old = apply_atomic(*r, v.slice);
      ++count_.served;
    } else if (r->carried && r->length > 0) {
      copy_into(v.slice, m.placed[0]);
      count_.copied_in += r->length;
      ++count_.served;
    }
    if (!is_atomic(r->op))  // came ahead, by RDMA write or the I/O thread's
      count_.bytes_in += r->length;
    deliver_then(l, in, *r);
    return answer(l, in.request_id, v.st, v.why, old);
  }
  if (v.st != grant_status::ok || r->length == 0)
    return answer(l, in.request_id, v.st, v.why);
  serve_read(l, in, *r, v);
}

// The bytes written out into the holder's map of its destination, the
// status behind them on the same link.
void grant_owner::serve_read(link& l, const envelope& in, grant_request& r, grant_verdict& v) {
  ++count_.served;
  count_.bytes_out += r.length;
  outbound_message out;
  out.writes.push_back({r.destination, std::move(v.slice)});
  out.env.kind = envelope_kind::grant_status;
  out.env.request_id = in.request_id;
  out.env.body = encode(grant_answer{grant_status::ok, {}});
  std::weak_ptr<link> on = l.shared_from_this();
  auto op = in.request_id;
  // Only a destination the holder has not mapped stops it here: the link's
  // end the holder hears of by itself.
  out.on_failure = [alive = port_.lifetime(), self = this, on, op](send_failure f,
                                                                   const std::string& why) {
    auto port = alive.lock();  // and with it this side
    auto l = on.lock();
    if (port && l && f == send_failure::not_mapped)
      self->answer(*l, op, grant_status::remote_error, why);
  };
  // Congested, the holder hears nothing until the connection ends: its
  // reads are bounded by what it keeps in flight (max_grant_uses).
  if (port_.submit(l, std::move(out)) == link::submitted::congested) {
    const auto& peer = l.peer_name();
    logging::warn(node_name_, {"grant_read_dropped",
                               peer,
                               {},
                               "a read of a grant by node '" + peer +
                                   "' is dropped: its connection's queue is full"});
  }
}

// The holder read or ran its atomic already, through the map the grant
// gave it; this judges the claim all the same (a use-once grant ends
// here) and delivers the `then` only on an ok verdict. The status is the
// verdict: an ok one tells the holder its `then` went.
void grant_owner::judge_done(link& l, const envelope& in, grant_request& r,
                             const grant_verdict& v) {
  if (v.st == grant_status::ok && r.op == grant_op::read)
    count_.bytes_out += r.length;  // read one-sided from our memory
  if (v.st == grant_status::ok)
    deliver_then(l, in, r);
  answer(l, in.request_id, v.st, v.why);
}

void grant_owner::deliver_then(link& l, const envelope& in, grant_request& r) {
  if (r.then_to == 0)
    return;
  inbound_message then;
  then.env.kind = envelope_kind::message;
  then.env.sender = in.sender;
  then.env.receiver = r.then_to;
  then.env.body = std::move(r.then_body);
  ++count_.thens_carried;
  port_.deliver(l, then);
}

}  // namespace riomesh::actors
