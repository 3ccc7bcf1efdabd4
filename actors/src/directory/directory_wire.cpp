// Actor messages to envelopes and back. Outbound, a proxy's message gets
// the kind its message id says (one-way, request, response), its sender is
// made addressable by id, and its buffers at or above the eager threshold
// are placed. Inbound, an envelope becomes a mailbox element for a local
// actor, from a proxy of its remote sender, with a request id the
// response can be matched to on its way back.
#include "directory_state.hpp"
#include "system_message.hpp"

#include <riomesh/config/text.hpp>

#include <riomesh/errc.hpp>
#include <riomesh/log.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/mailbox_element.hpp>

namespace riomesh::actors {
namespace {

// Hands an envelope to the peer's connection, or to the node when there is
// none (it answers why); `failed` runs if it cannot go out.
template <class OnError>
void send_envelope(directory_ptr self, const std::string& peer, outbound_message&& m,
                   OnError failed) {
  auto& st = self->state;
  auto route = st.routes.find(peer);
  if (route == st.routes.end()) {
    self->request(st.node, caf::infinite, outbound_atom::value, peer, std::move(m))
        .then([](std::uint64_t) {}, [failed](caf::error& e) mutable { failed(e); });
    return;
  }
  self->request(route->second, caf::infinite, outbound_atom::value, std::move(m))
      .then([](std::uint64_t) {},
            [peer, failed](caf::error& e) mutable {
              // The connection quit with this still in its mailbox: for the
              // sender, the peer is not connected.
              if (e == caf::sec::request_receiver_down)
                e = make_error(errc::not_connected, "node '" + peer + "'");
              failed(e);
            });
}

void send_control(directory_ptr self, const std::string& peer, envelope&& e) {
  outbound_message m;
  m.env = std::move(e);
  send_envelope(self, peer, std::move(m), [self, peer](caf::error& e) {
    logging::debug(me(self), "to node '" + peer + "': " + self->system().render(e));
  });
}

// An error envelope's body: the riomesh error code (one byte), then text.
void send_error(directory_ptr self, const std::string& peer, std::uint64_t receiver,
                std::uint64_t request_id, errc code, const std::string& why) {
  envelope e;
  e.kind = envelope_kind::error;
  e.receiver = receiver;
  e.request_id = request_id;
  e.body.push_back(static_cast<unsigned char>(code));
  e.body.insert(e.body.end(), why.begin(), why.end());
  send_control(self, peer, std::move(e));
}

// A peer's error envelope as an error here; a code we do not know stays
// visible as the peer's text.
caf::error error_of(const std::string& peer, const std::vector<unsigned char>& body) {
  auto code = body.empty() ? 0 : body[0];
  bool known = code == static_cast<unsigned char>(errc::actor_exited) ||
               code == static_cast<unsigned char>(errc::decode_failure) ||
               code == static_cast<unsigned char>(errc::refused);
  // A peer's words: printable, whoever prints them.
  std::string text =
      body.empty() ? "" : config::printable(std::string(body.begin() + 1, body.end()));
  if (!known)
    text = "node '" + peer + "' answered with error code " + std::to_string(code) + ": " + text;
  return make_error(known ? static_cast<errc>(code) : errc::decode_failure, text);
}

void undeliverable(directory_ptr self, const forwarded& f, caf::error why) {
  auto& st = self->state;
  ++st.counters.undeliverable;
  if (is(why, errc::congested))
    st.congested.insert(f.peer);
  if (f.mid.is_request()) {
    // It was entered as waiting; whoever fails it first answers.
    return;
  }
  if (f.mid.is_response()) {
    logging::warn(me(self),
                  "a response to node '" + f.peer + "' was lost: " + self->system().render(why));
    return;
  }
  if (f.sender)
    f.sender->enqueue(f.proxy, caf::make_message_id(),
                      caf::make_message(undelivered_atom::value, f.peer, std::move(why)),
                      self->context());
}

std::string text_of(const std::vector<unsigned char>& body) {
  return std::string(body.begin(), body.end());
}

}  // namespace

void forward(directory_ptr self, forwarded& f) {
  auto& st = self->state;
  outbound_message m;
  m.env.receiver = f.remote_id;
  std::uint64_t wait = 0;
  if (f.mid.is_response()) {
    m.env.kind = envelope_kind::response;
    m.env.request_id = f.mid.request_id().integer_value();
  } else if (f.mid.is_request()) {
    m.env.kind = envelope_kind::request;
    wait = st.requests.add(f.peer, {f.sender, f.mid, f.proxy});
    m.env.request_id = wait;
    ++st.counters.requests_out;
  } else {
    m.env.kind = envelope_kind::message;
  }
  if (f.sender) {
    m.env.sender = f.sender->id();
    watch_export(self, f.sender, f.peer);
  }
  auto fail = [self, wait, f](caf::error& why) {
    if (wait != 0)
      if (auto w = self->state.requests.take(f.peer, wait))
        fail_request(self, *w, why);
    undeliverable(self, f, why);
  };
  encoded_message enc;
  std::string error;
  if (!encode_message(self->system(), f.content, st.params.eager_threshold, enc, error)) {
    auto why = make_error(errc::encode_failure, "to node '" + f.peer + "': " + error);
    return fail(why);
  }
  m.env.body = std::move(enc.body);
  m.placed = std::move(enc.placed);
  ++st.counters.messages_out;
  st.counters.payload_copied_out += enc.copied;
  for (auto& b : m.placed)
    st.counters.bytes_placed_out += b.size();
  send_envelope(self, f.peer, std::move(m), fail);
}

namespace {

// The envelope's message, its buffers the views that arrived; counts what
// was placed and what came inline.
bool decode_counted(directory_ptr self, inbound_message& m, caf::message& msg, std::string& error) {
  std::uint64_t copied = 0;
  auto placed = [&m](std::size_t i) { return m.placed[i]; };
  if (!decode_message(self->system(), m.env.body.data(), m.env.body.size(), m.placed.size(), placed,
                      msg, error, &copied))
    return false;
  auto& c = self->state.counters;
  c.payload_copied_in += copied;
  for (auto& b : m.placed)
    c.bytes_placed_in += b.size();
  return true;
}

void deliver(directory_ptr self, const std::string& peer, inbound_message& m) {
  auto& st = self->state;
  auto& env = m.env;
  bool request = env.kind == envelope_kind::request;
  auto where = "from node '" + peer + "' to actor " + std::to_string(env.receiver) + ": ";
  auto refuse = [&](errc code, const std::string& why) {
    ++st.counters.bad_inbound;
    logging::warn(me(self), where + why);
    if (request)
      send_error(self, peer, env.sender, env.request_id, code, "node '" + me(self) + "': " + why);
  };
  if (request && (env.request_id == 0 || env.request_id > pending_table<int>::max_id))
    return refuse(errc::decode_failure,
                  "request id " + std::to_string(env.request_id) + " out of range");
  auto target = caf::actor_cast<caf::strong_actor_ptr>(st.exports.find(env.receiver));
  if (!target)
    return refuse(errc::actor_exited, "no such actor (it exited, or was never published)");
  caf::message msg;
  std::string error;
  if (!decode_counted(self, m, msg, error))
    return refuse(errc::decode_failure, error);
  if (const char* kind = system_message_kind(msg)) {
    ++st.counters.system_refused;
    return refuse(errc::refused, std::string{"a CAF system message ("} + kind +
                                     ") from the wire; links and monitors across nodes are "
                                     "riomesh's own, and it makes their messages itself");
  }
  ++st.counters.messages_in;
  caf::strong_actor_ptr sender;
  if (env.sender != 0)
    sender = proxy_for(self, peer, env.sender);
  auto mid = request ? caf::message_id{caf::message_id::default_async_value | env.request_id}
                     : caf::make_message_id();
  target->enqueue(std::move(sender), mid, std::move(msg), self->context());
}

void complete(directory_ptr self, const std::string& peer, inbound_message& m) {
  auto& st = self->state;
  auto w = st.requests.take(peer, m.env.request_id);
  if (!w) {
    // Answered after its requester gave up, or a lie: nothing waits.
    logging::debug(me(self), "from node '" + peer + "': a " + to_string(m.env.kind) +
                                 " for request " + std::to_string(m.env.request_id) +
                                 " nobody waits for");
    return;
  }
  ++st.counters.responses_in;
  if (m.env.kind == envelope_kind::error)
    return fail_request(self, *w, error_of(peer, m.env.body));
  caf::message msg;
  std::string error;
  if (!decode_counted(self, m, msg, error)) {
    ++st.counters.bad_inbound;
    return fail_request(
        self, *w, make_error(errc::decode_failure, "response from node '" + peer + "': " + error));
  }
  w->requester->enqueue(w->proxy, w->mid.response_id(), std::move(msg), self->context());
}

void answer_resolve(directory_ptr self, const std::string& peer, const envelope& in) {
  auto& st = self->state;
  envelope out;
  out.kind = envelope_kind::resolved;
  out.request_id = in.request_id;
  if (auto* p = st.exports.published(text_of(in.body))) {
    out.sender = p->id;
    out.body.assign(p->interface.begin(), p->interface.end());
    watch_export(self, p->handle, peer);
  }
  send_control(self, peer, std::move(out));
}

void resolved(directory_ptr self, const std::string& peer, const envelope& in) {
  auto& st = self->state;
  auto w = st.resolves.take(peer, in.request_id);
  if (!w)
    return;  // timed out meanwhile
  if (in.sender == 0)
    return w->rp.deliver(
        make_error(errc::not_published, "no actor named '" + w->name + "' on node '" + peer + "'"));
  w->rp.deliver(proxy_for(self, peer, in.sender), text_of(in.body));
}

}  // namespace

void on_inbound(directory_ptr self, const std::string& peer, inbound_message& m) {
  switch (m.env.kind) {
    case envelope_kind::message:
    case envelope_kind::request:
      return deliver(self, peer, m);
    case envelope_kind::response:
    case envelope_kind::error:
      return complete(self, peer, m);
    case envelope_kind::resolve:
      return answer_resolve(self, peer, m.env);
    case envelope_kind::resolved:
      return resolved(self, peer, m.env);
    case envelope_kind::down:
      return kill_proxy(
          self, peer, m.env.sender,
          make_error(errc::actor_exited, "actor " + std::to_string(m.env.sender) + " on node '" +
                                             peer + "': " + text_of(m.env.body)));
    case envelope_kind::release:
    case envelope_kind::piece:
    case envelope_kind::farewell:
      break;  // the connection's own
  }
}

void send_resolve(directory_ptr self, const std::string& peer, std::uint64_t id,
                  const std::string& name) {
  envelope e;
  e.kind = envelope_kind::resolve;
  e.request_id = id;
  e.body.assign(name.begin(), name.end());
  send_control(self, peer, std::move(e));
}

void place(directory_ptr self, const std::string& peer, std::uint64_t offset, buffer&& data,
           const caf::strong_actor_ptr& notify) {
  outbound_message m;
  m.has_envelope = false;
  m.writes.push_back({offset, std::move(data)});
  auto tell = [notify, peer](caf::error why) {
    if (notify)
      notify->enqueue(nullptr, caf::make_message_id(),
                      caf::make_message(undelivered_atom::value, peer, std::move(why)), nullptr);
  };
  // Dropped at the connection: it runs there, on the connection's thread.
  m.on_failure = [tell, peer](const std::string& why) {
    tell(make_error(errc::not_mapped, "node '" + peer + "': " + why));
  };
  ++self->state.counters.direct_writes;
  send_envelope(self, peer, std::move(m), [self, tell](caf::error& e) {
    ++self->state.counters.undeliverable;
    tell(e);
  });
}

void send_down(directory_ptr self, const std::string& peer, std::uint64_t id,
               const std::string& reason) {
  envelope e;
  e.kind = envelope_kind::down;
  e.sender = id;
  e.body.assign(reason.begin(), reason.end());
  send_control(self, peer, std::move(e));
}

}  // namespace riomesh::actors
