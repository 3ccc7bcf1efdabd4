#include <riomesh/actors/connection/session_setup.hpp>

#include <riomesh/actors/handshake/trust_rules.hpp>

namespace riomesh::actors {

session_setup::session_setup(std::shared_ptr<const tls_context> tls, options o)
    : opt_(std::move(o)), tls_(std::move(tls)), hs_(tls_, opt_.dialer, opt_.expected) {
  take_handshake_output();  // the dialer's ClientHello
}

session_setup::~session_setup() = default;
session_setup::session_setup(session_setup&&) noexcept = default;

void session_setup::fail(const std::string& why) {
  if (!reason_.empty())
    return;
  auto name = !peer_.name.empty() ? peer_.name : hs_.named();
  reason_ = "peer " + opt_.peer + (name.empty() ? "" : " (" + name + ")") + ": " + why;
  // A TLS alert if the handshake failed, or our refusal: the peer then
  // sees it itself, if the channel still takes it before the shutdown.
  take_handshake_output();
  shutdown_due_ = true;
}

void session_setup::take_handshake_output() {
  auto bytes = hs_.take_output();
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

void session_setup::send(const std::vector<unsigned char>& message) {
  hs_.send(message);
  take_handshake_output();
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
    take_handshake_output();
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
  bool can = opt_.can_encrypt;
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

std::size_t session_setup::on_bytes(const unsigned char* p, std::size_t n) {
  if (!reading())
    return 0;
  std::size_t used = hs_.feed(p, n);
  if (hs_.current() == handshake::state::failed) {
    fail(hs_.reason());
    return used;
  }
  take_handshake_output();
  if (stage_ == stage::certificate && !hs_.certificate_pending()) {
    stage_ = stage::hello;
    on_hello(peer_);
  }
  if (stage_ == stage::tls && hs_.current() == handshake::state::secured) {
    stage_ = stage::hello;
    if (opt_.dialer)
      send(encode_hello(opt_.mine));
  }
  while (reading())
    if (auto m = hs_.receive())
      on_message(*m);
    else
      break;
  // Sealing our answer can fail the handshake too: seen now, not at the
  // peer's next bytes, which may never come.
  if (hs_.current() == handshake::state::failed)
    fail(hs_.reason());
  after_output();
  return used;
}

void session_setup::on_end(const std::string& why) {
  if (failed() || established())
    return;
  fail("the peer ended the connection during setup" + (why.empty() ? std::string{} : ": " + why));
}

void session_setup::on_early_frame(const std::string& what) {
  if (awaiting_peer() && !what.empty())
    fail(what);
}

void session_setup::sent(std::size_t n) {
  out_pos_ += std::min(n, out_.size() - out_pos_);
  if (out_pos_ < out_.size())
    return;
  out_.clear();
  out_pos_ = 0;
  after_output();
}

void session_setup::send_failed(const std::string& why) {
  out_.clear();
  out_pos_ = 0;
  fail("send: " + why);
}

void session_setup::after_output() {
  if (!out_.empty() || failed())
    return;
  if (!refusal_.empty())
    fail(refusal_);
}

ssl_st* session_setup::take_stream_tls() {
  if (failed() || tls_taken_ || stage_ != stage::done || !out_.empty() || !encrypt_)
    return nullptr;
  tls_taken_ = true;
  return hs_.release();
}

void session_setup::secured(bool ok, const std::string& error) {
  if (ok)
    secured_ = true;
  else
    fail("cannot encrypt the stream: " + error);
}

bool session_setup::take_authorize() {
  if (!established() || authorized_)
    return false;
  authorized_ = true;
  return true;
}

bool session_setup::take_shutdown() {
  return std::exchange(shutdown_due_, false);
}

}  // namespace riomesh::actors
