// The start of every riomesh connection, before either side exposes any
// memory: a TLS 1.3 handshake over the channel's stream (handshake.hpp),
// then, under it, the dialer's hello, the acceptor's hello (or refusal),
// the dialer's confirmation (or refusal) (session_hello.hpp). Each side
// judges the other by how it proved itself and what it claims
// (trust_rules.hpp) and asks the node whether the session may be
// (session_registry.hpp); a refusal travels under TLS, so both sides log
// the same reason. Then the stream is the connection core's: in the clear,
// or, where both sides chose it and the channel can, encrypted under the
// same TLS session from there on (stream_guard.hpp).
//
// Sans-IO: it never touches a channel. What the channel brings goes in as
// events (stream bytes, the stream's end, a frame the peer sent too
// early); what it must do comes out as work (bytes to send, the TLS
// connection to encrypt the rest under, the gate to open, a shutdown).
// session_drive.hpp carries them between it and a channel; the unit tests
// carry them between two setups in memory. The owner bounds it in time.
#pragma once

#include <riomesh/actors/connection/session_hello.hpp>
#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/handshake/handshake.hpp>
#include <riomesh/actors/handshake/trust_rules.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct ssl_st;  // OpenSSL's TLS connection

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
    // Where the peer is, for reasons (the channel's peer()).
    std::string peer;
    // The channel can encrypt the rest of the stream (it has a guard).
    bool can_encrypt = false;
  };

  session_setup(std::shared_ptr<const tls_context> tls, options o);
  ~session_setup();
  session_setup(session_setup&&) noexcept;
  session_setup(const session_setup&) = delete;
  session_setup& operator=(const session_setup&) = delete;

  // ---- events: what the channel brings ----
  // Stream bytes from the peer, oldest first. Returns how many it took:
  // the rest wait for the next call, or are the core's once established.
  std::size_t on_bytes(const unsigned char* p, std::size_t n);
  // The peer ended its stream, or the channel closed (`why`: its reason).
  void on_end(const std::string& why);
  // Everything the peer streamed is read, and it sent a map or placement
  // (`what`): no node does that before its session.
  void on_early_frame(const std::string& what);
  // The channel took the first n bytes of output(), or refused them.
  void sent(std::size_t n);
  void send_failed(const std::string& why);
  // The channel's guard took take_stream_tls()'s connection, or not.
  void secured(bool ok, const std::string& error);

  // ---- work: what the channel must do ----
  // Bytes to send, in order.
  std::pair<const unsigned char*, std::size_t> output() const {
    return {out_.data() + out_pos_, out_.size() - out_pos_};
  }
  // It takes stream bytes now: not failed, not refusing, not done.
  bool reading() const { return reason_.empty() && refusal_.empty() && stage_ != stage::done; }
  // The peer has yet to finish its part (an early frame still counts).
  bool awaiting_peer() const { return reason_.empty() && stage_ != stage::done; }
  // Once, when the rest of the stream is to be encrypted and our last
  // message in the clear is all sent: the TLS session to hand to the
  // channel's guard (null otherwise). The caller owns it, and frees it
  // (SSL_free) if the guard does not take it; answer with secured().
  ssl_st* take_stream_tls();
  // Once established: open the channel's gate (true once).
  bool take_authorize();
  // Failed: send what output() still holds if the channel takes it, then
  // shut the channel down (true once).
  bool take_shutdown();

  // ---- the outcome ----
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
  // The rest of the stream is encrypted.
  bool encrypted() const { return encrypt_; }
  // Failed because the peer is not the node meant (either side said so).
  bool wrong_node() const { return wrong_node_; }

 private:
  // certificate: the acceptor waits for the dialer's key (on_hello).
  enum class stage { tls, hello, certificate, confirm, done };

  void fail(const std::string& why);
  // Refuses the session: the peer hears why under TLS, then we fail.
  void refuse(const std::string& why, bool wrong_node = false);
  void on_message(const std::vector<unsigned char>& bytes);
  // The peer's hello: judged, claimed, answered.
  void on_hello(const session_hello& h);
  void send(const std::vector<unsigned char>& message);
  void take_handshake_output();
  // What follows once our output is all sent: a refusal fails us.
  void after_output();

  options opt_;
  std::shared_ptr<const tls_context> tls_;
  handshake hs_;
  stage stage_ = stage::tls;
  bool certificate_asked_ = false;
  bool encrypt_ = false, secured_ = false, tls_taken_ = false;
  bool authorized_ = false;  // the gate opened: the peer may map and place
  bool shutdown_due_ = false;
  session_hello peer_;
  peer_verdict verdict_;
  session_registry::verdict claimed_ = session_registry::verdict::granted;
  std::string refusal_;  // ours, failed with once it is sent
  bool wrong_node_ = false;
  std::vector<unsigned char> out_;
  std::size_t out_pos_ = 0;
  std::string reason_;
};

}  // namespace riomesh::actors
