// The start of every riomesh connection, before either side exposes any
// memory: a TLS 1.3 handshake over the channel's stream (handshake.hpp),
// then, under it, the dialer's hello, the acceptor's hello (or refusal),
// the dialer's confirmation (or refusal) (session_hello.hpp). Each side
// judges the other by how it proved itself and what it claims
// (trust_rules.hpp) and asks the node whether the session may be
// (session_registry.hpp); a refusal travels under TLS, so both sides log
// the same reason. Then the stream is the connection core's: in the clear,
// or, where both sides chose it and the channel can, encrypted under the
// same TLS session from there on (channel::secure). Driven by pump() like
// the core; the owner bounds it in time. Once established it authorizes
// the channel (channel.hpp: the gate).
#pragma once

#include <riomesh/actors/connection/session_hello.hpp>
#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/handshake/handshake.hpp>
#include <riomesh/actors/handshake/trust_rules.hpp>
#include <riomesh/channels/channel.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

class session_setup {
 public:
  using claim_fn = std::function<session_registry::answer(const session_registry::claim&)>;

  struct options {
    session_hello mine;  // this node's name, terms, and whether it wants encryption
    bool dialer = false;
    std::string expected;  // dialer: the node it means (empty: by address)
    // Accept a peer when neither side proves anything (loopback, or
    // insecure: true in the config).
    bool allow_unauthenticated = false;
    // Asked once the peer is judged; empty grants every session.
    claim_fn claim;
  };

  session_setup(channels::channel& ch, std::shared_ptr<const tls_context> tls, options o);
  ~session_setup();

  // Sends and reads what it can; true if anything moved.
  bool pump();
  // Both sides judged and agreed, ours sent: the stream is the core's now.
  bool established() const {
    return stage_ == stage::done && out_.empty() && (!encrypt_ || secured_) && reason_.empty();
  }
  bool failed() const { return !reason_.empty(); }
  const std::string& reason() const { return reason_; }
  const std::string& peer_name() const { return peer_.name; }
  bool authenticated() const { return verdict_.authenticated; }
  // The peer proved a key the node's admins list.
  bool admin() const { return verdict_.admin; }
  const session_terms& peer_terms() const { return peer_.terms; }
  // The node's verdict on this session.
  session_registry::verdict verdict() const { return claimed_; }
  // The rest of the stream is encrypted (channel::secure).
  bool encrypted() const { return encrypt_; }
  // Failed because the peer is not the node meant (either side said so).
  bool wrong_node() const { return wrong_node_; }

 private:
  // certificate: the acceptor waits for the dialer's key (on_hello).
  enum class stage { tls, hello, certificate, confirm, done };

  bool flush();
  void fail(const std::string& why);
  // Refuses the session: the peer hears why under TLS, then we fail.
  void refuse(const std::string& why, bool wrong_node = false);
  void on_message(const std::vector<unsigned char>& bytes);
  // The peer's hello: judged, claimed, answered.
  void on_hello(const session_hello& h);
  void send(const std::vector<unsigned char>& message);
  void secure_channel();

  channels::channel& ch_;
  options opt_;
  std::shared_ptr<const tls_context> tls_;
  handshake hs_;
  stage stage_ = stage::tls;
  bool certificate_asked_ = false;
  bool encrypt_ = false, secured_ = false;
  bool authorized_ = false;  // the channel told: the peer may map and place
  session_hello peer_;
  peer_verdict verdict_;
  session_registry::verdict claimed_ = session_registry::verdict::granted;
  std::string refusal_;  // ours, failed with once it is sent
  bool wrong_node_ = false;
  std::vector<unsigned char> out_;
  std::size_t out_pos_ = 0;
  unsigned char probe_ = 0;  // a byte read while looking for the end of stream
  std::string reason_;
};

}  // namespace riomesh::actors
