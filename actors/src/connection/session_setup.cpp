#include <riomesh/actors/connection/session_setup.hpp>

#include <riomesh/channels/wire/byte_order.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

constexpr std::uint32_t terms_magic = 0x4d544d52;  // "RMTM"
constexpr std::size_t terms_size = 32;
constexpr std::uint16_t refused_flag = 1, identity_flag = 2;
// The identity after its u16 length: pid, host id, port, host length, host.
constexpr std::size_t identity_fixed = 4 + 20 + 2 + 1;
constexpr std::size_t identity_max = identity_fixed + 255;

}  // namespace

session_setup::session_setup(channels::channel& ch, handshake hs, const session_terms& mine,
                             bool allow_unauthenticated, claim_fn claim)
    : ch_(ch),
      hs_(std::move(hs)),
      mine_(mine),
      allow_unauthenticated_(allow_unauthenticated),
      claim_(std::move(claim)) {}

void session_setup::fail(const std::string& why) {
  if (!reason_.empty())
    return;
  reason_ = "peer " + ch_.peer() + (hs_.peer_name().empty() ? "" : " (" + hs_.peer_name() + ")") +
            ": " + why;
  flush();  // our proof or refusal, if waiting: the peer then sees it itself
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

std::size_t session_setup::terms_length() const {
  if (terms_in_.size() < terms_size)
    return terms_size;
  auto flags = wire::load_le<std::uint16_t>(terms_in_.data() + 6);
  if (!(flags & identity_flag))
    return terms_size;
  if (terms_in_.size() < terms_size + 2)
    return terms_size + 2;
  return terms_size + 2 + wire::load_le<std::uint16_t>(terms_in_.data() + terms_size);
}

void session_setup::on_terms(const unsigned char* p, std::size_t n) {
  if (wire::load_le<std::uint32_t>(p) != terms_magic)
    return fail("no session terms after the handshake");
  auto flags = wire::load_le<std::uint16_t>(p + 6);
  if (flags & ~(refused_flag | identity_flag))
    return fail("unknown session flags " + std::to_string(flags));
  if (flags & refused_flag) {
    if (claim_)  // only an acceptor refuses
      return fail("a dialing peer's terms cannot refuse the session");
    return fail("node '" + hs_.peer_name() +
                "' refused this session: it has a live session with this node's name (a node "
                "that restarted gets in once its old session is found gone)");
  }
  session_terms t;
  t.max_buffers = wire::load_le<std::uint16_t>(p + 4);
  t.max_body = wire::load_le<std::uint32_t>(p + 8);
  t.arena_size = wire::load_le<std::uint64_t>(p + 12);
  t.incarnation = wire::load_le<std::uint64_t>(p + 20);
  t.silence_limit_ms = wire::load_le<std::uint32_t>(p + 28);
  if (flags & identity_flag) {
    const unsigned char* id = p + terms_size + 2;
    std::size_t length = n - terms_size - 2;
    if (length < identity_fixed || id[identity_fixed - 1] != length - identity_fixed)
      return fail("an identity of " + std::to_string(length) + " bytes in its session terms");
    t.identity.process_id = wire::load_le<std::uint32_t>(id);
    std::copy_n(id + 4, 20, t.identity.host_id.begin());
    t.identity.listen_port = wire::load_le<std::uint16_t>(id + 24);
    t.identity.listen_host.assign(id + identity_fixed, id + length);
    if (!t.identity.valid())
      return fail("an identity with no host id in its session terms");
  }
  peer_terms_ = t;
}

void session_setup::send_terms(bool refused) {
  bool identity = mine_.identity.valid() && !refused;
  wire::append_le<std::uint32_t>(out_, terms_magic);
  wire::append_le<std::uint16_t>(out_, mine_.max_buffers);
  wire::append_le<std::uint16_t>(out_, static_cast<std::uint16_t>((refused ? refused_flag : 0) |
                                                                  (identity ? identity_flag : 0)));
  wire::append_le<std::uint32_t>(out_, mine_.max_body);
  wire::append_le<std::uint64_t>(out_, mine_.arena_size);
  wire::append_le<std::uint64_t>(out_, mine_.incarnation);
  wire::append_le<std::uint32_t>(out_, mine_.silence_limit_ms);
  if (identity) {
    const auto& id = mine_.identity;
    auto host = id.listen_host.substr(0, 255);
    wire::append_le<std::uint16_t>(out_, static_cast<std::uint16_t>(identity_fixed + host.size()));
    wire::append_le<std::uint32_t>(out_, id.process_id);
    out_.insert(out_.end(), id.host_id.begin(), id.host_id.end());
    wire::append_le<std::uint16_t>(out_, id.listen_port);
    out_.push_back(static_cast<unsigned char>(host.size()));
    out_.insert(out_.end(), host.begin(), host.end());
  }
  terms_sent_ = true;
}

bool session_setup::pump() {
  if (failed() || established())
    return false;
  bool moved = false;
  auto hello = hs_.take_output();
  out_.insert(out_.end(), hello.begin(), hello.end());
  while (!peer_terms_ && !failed()) {
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
    std::size_t used = 0;
    if (!hs_.done()) {
      used = hs_.feed(p, n);
      auto more = hs_.take_output();  // the proof, once the peer's hello is in
      out_.insert(out_.end(), more.begin(), more.end());
    } else {
      if (terms_length() > terms_size + 2 + identity_max) {
        fail("session terms of " + std::to_string(terms_length()) + " bytes");
        return true;
      }
      used = std::min(n, terms_length() - terms_in_.size());
      terms_in_.insert(terms_in_.end(), p, p + used);
    }
    if (p != &probe_)
      ch_.consume(used);
    moved = true;
    if (hs_.current() == handshake::state::refused) {
      fail(hs_.reason());
      return true;
    }
    if (terms_in_.size() >= terms_size && terms_in_.size() == terms_length())
      on_terms(terms_in_.data(), terms_in_.size());
  }
  if (failed())
    return true;
  if (hs_.done() && !terms_sent_) {
    if (hs_.current() == handshake::state::unauthenticated && !allow_unauthenticated_) {
      fail(
          "refused: neither side proves itself (no cluster secret, no node key), and this node "
          "only accepts that on loopback or with insecure: true");
      return true;
    }
    // Only now, authenticated (or allowed without), do we say what we
    // expose. The acceptor first hears the dialer out, and decides.
    if (!claim_) {
      send_terms(false);
    } else if (peer_terms_) {
      auto a = claim_({hs_.peer_name(), peer_terms_->incarnation, hs_.name_proven()});
      verdict_ = a.v;
      bool refused = a.v == session_registry::verdict::refused;
      send_terms(refused);
      if (refused)
        refusal_ = a.why;
    }
  }
  if (!out_.empty())
    moved = flush() || moved;
  if (!refusal_.empty() && out_.empty()) {
    fail(refusal_);
    return true;
  }
  if (!failed() && !established() && ch_.closed())
    fail("the peer ended the connection during setup: " + ch_.reason());
  // Everything the peer streamed is read, its terms are not among it, and
  // it sent a map or placement: no node does that before its session.
  if (!failed() && !peer_terms_ && ch_.peek().second == 0)
    if (auto held = ch_.held_frame(); !held.empty()) {
      fail(held);
      return true;
    }
  if (established() && !authorized_) {
    authorized_ = true;
    ch_.authorize();
  }
  return moved;
}

}  // namespace riomesh::actors
