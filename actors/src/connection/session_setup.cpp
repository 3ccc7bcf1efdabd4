#include <riomesh/actors/connection/session_setup.hpp>

#include <riomesh/actors/handshake/trust_rules.hpp>

#include <openssl/ssl.h>

namespace riomesh::actors {

session_setup::session_setup(channels::channel& ch, std::shared_ptr<const tls_context> tls,
                             options o)
    : ch_(ch), opt_(std::move(o)), tls_(std::move(tls)), hs_(tls_, opt_.dialer, opt_.expected) {}

session_setup::~session_setup() = default;

void session_setup::fail(const std::string& why) {
  if (!reason_.empty())
    return;
  auto name = !peer_.name.empty() ? peer_.name : hs_.named();
  reason_ = "peer " + ch_.peer() + (name.empty() ? "" : " (" + name + ")") + ": " + why;
  auto alert = hs_.take_output();  // a TLS alert, if the handshake failed
  out_.insert(out_.end(), alert.begin(), alert.end());
  flush();  // that, or our refusal: the peer then sees it itself
  ch_.shutdown(channels::shutdown_how::both);
}

bool session_setup::flush() {
  while (out_pos_ < out_.size()) {
    auto r = ch_.send(out_.data() + out_pos_, out_.size() - out_pos_);
    out_pos_ += r.bytes;
    if (r.bytes == 0) {
      if (r.st != channels::status::would_block)
        fail(std::string{"send: "} + engine::to_string(r.st));
      return false;
    }
  }
  out_.clear();
  out_pos_ = 0;
  return true;
}

void session_setup::send(const std::vector<unsigned char>& message) {
  hs_.send(message);
  auto bytes = hs_.take_output();
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

void session_setup::refuse(const std::string& why, bool wrong_node) {
  if (!refusal_.empty())
    return;
  wrong_node_ = wrong_node;
  send(encode_refusal(why, wrong_node));
  refusal_ = why;
}

void session_setup::on_message(const std::vector<unsigned char>& bytes) {
  auto m = decode_session_message(bytes);
  switch (m.what) {
    case session_message::kind::malformed:
      return fail("a malformed session message: " + m.text);
    case session_message::kind::refusal:
      wrong_node_ = m.wrong_node;
      return fail((peer_.name.empty() ? std::string{"the peer"} : "node '" + peer_.name + "'") +
                  " refused this session: " + m.text);
    case session_message::kind::hello:
      if (stage_ != stage::hello)
        return fail("a hello where none belongs");
      return on_hello(m.hello);
    case session_message::kind::confirm:
      if (opt_.dialer || stage_ != stage::confirm)
        return fail("a confirmation where none belongs");
      stage_ = stage::done;
      return;
  }
}

void session_setup::on_hello(const session_hello& h) {
  peer_ = h;
  // A member by the secret claiming a name the keyring lists: that name is
  // proven by its key, asked for now under the same TLS session.
  if (!opt_.dialer && hs_.peer_proof() == handshake::proof::secret &&
      tls_->creds().trusted.count(h.name) && !certificate_asked_) {
    certificate_asked_ = true;
    hs_.request_certificate();
    auto bytes = hs_.take_output();
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    stage_ = stage::certificate;
    return;
  }
  peer_claim c;
  c.we_dialed = opt_.dialer;
  c.our_name = opt_.mine.name;
  c.expected = opt_.expected;
  c.proof = hs_.peer_proof();
  c.proven = hs_.proven_name();
  c.claimed = h.name;
  c.psk_declined = hs_.psk_declined();
  c.meant = hs_.meant();
  c.creds = &tls_->creds();
  c.allow_unauthenticated = opt_.allow_unauthenticated;
  verdict_ = judge(c);
  if (!verdict_.ok)
    return refuse(verdict_.why, verdict_.wrong_node);
  bool can = ch_.guard() != nullptr;
  if (opt_.dialer) {
    // The acceptor's hello carries the decision: ours or its wish.
    if (h.encrypt && !can)
      return refuse("the acceptor wants the stream encrypted, which this channel cannot do");
    if (opt_.mine.encrypt && !h.encrypt)
      return refuse("this node wants the stream encrypted, and the acceptor's channel cannot");
    encrypt_ = h.encrypt;
  } else {
    encrypt_ = can && (opt_.mine.encrypt || h.encrypt);
    if (h.encrypt && !can)
      return refuse("the dialer wants the stream encrypted, which this channel cannot do");
  }
  if (opt_.claim) {
    session_registry::claim cl;
    cl.peer = h.name;
    cl.incarnation = h.terms.incarnation;
    cl.name_proven = c.proof == handshake::proof::key;
    cl.identity = h.terms.identity;
    cl.arena =
        opt_.mine.terms.arena_first ? opt_.mine.terms.arena_first : opt_.mine.terms.arena_size;
    cl.dialed = opt_.dialer;
    auto a = opt_.claim(cl);
    claimed_ = a.v;
    if (a.v == session_registry::verdict::refused)
      return refuse(a.why);
  }
  if (opt_.dialer) {
    send(encode_confirm());
    stage_ = stage::done;
  } else {
    auto mine = opt_.mine;
    mine.encrypt = encrypt_;
    send(encode_hello(mine));
    stage_ = stage::confirm;
  }
}

void session_setup::secure_channel() {
  secured_ = true;
  std::string error;
  ssl_st* ssl = hs_.release();
  auto* guard = ch_.guard();
  if (!guard || !guard->secure(ssl, error)) {
    SSL_free(ssl);
    fail("cannot encrypt the stream: " + error);
  }
}

bool session_setup::pump() {
  if (failed() || established())
    return false;
  bool moved = false;
  auto first = hs_.take_output();  // the dialer's ClientHello
  out_.insert(out_.end(), first.begin(), first.end());
  while (!failed() && refusal_.empty() && stage_ != stage::done) {
    auto [p, n] = ch_.peek();
    if (n == 0) {
      // Nothing to read: has the peer ended its side? (It does when it
      // refuses us.) A byte that arrives meanwhile is read, not lost.
      auto r = ch_.recv(&probe_, 1);
      if (r.bytes == 1) {
        p = &probe_;
        n = 1;
      } else {
        if (r.st == channels::status::eof || r.st == channels::status::closed)
          fail("the peer ended the connection during setup" +
               (ch_.reason().empty() ? std::string{} : ": " + ch_.reason()));
        break;
      }
    }
    std::size_t used = hs_.feed(p, n);
    if (p != &probe_)
      ch_.consume(used);
    moved = moved || used > 0;
    if (hs_.current() == handshake::state::failed) {
      fail(hs_.reason());
      return true;
    }
    auto flight = hs_.take_output();
    out_.insert(out_.end(), flight.begin(), flight.end());
    if (stage_ == stage::certificate && !hs_.certificate_pending()) {
      stage_ = stage::hello;
      on_hello(peer_);
    }
    if (stage_ == stage::tls && hs_.current() == handshake::state::secured) {
      stage_ = stage::hello;
      if (opt_.dialer)
        send(encode_hello(opt_.mine));
    }
    while (auto m = hs_.receive()) {
      on_message(*m);
      if (failed() || !refusal_.empty() || stage_ == stage::done)
        break;
    }
    if (used == 0)
      break;
  }
  if (failed())
    return true;
  if (!out_.empty())
    moved = flush() || moved;
  if (!refusal_.empty() && out_.empty()) {
    fail(refusal_);
    return true;
  }
  if (stage_ == stage::done && out_.empty() && encrypt_ && !secured_)
    secure_channel();
  if (!failed() && !established() && ch_.closed())
    fail("the peer ended the connection during setup: " + ch_.reason());
  // Everything the peer streamed is read, its session is not set up, and
  // it sent a map or placement: no node does that before its session.
  if (!failed() && stage_ != stage::done && ch_.peek().second == 0)
    if (auto held = ch_.guard() ? ch_.guard()->held_frame() : std::string{}; !held.empty()) {
      fail(held);
      return true;
    }
  if (established() && !authorized_) {
    authorized_ = true;
    if (auto* guard = ch_.guard())
      guard->authorize();
  }
  return moved;
}

}  // namespace riomesh::actors
