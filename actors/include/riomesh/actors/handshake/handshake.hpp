// One connection's TLS 1.3 handshake (tls_context.hpp) and the messages
// sent under it before the session starts, sans-IO: it takes the peer's
// stream bytes and gives the bytes to send, through OpenSSL's memory BIOs.
// It takes whole TLS records only, and stops after the record that
// completes a message, so what the peer streams behind its last one (its
// envelopes, in the clear unless the channel encrypts) stays unread for
// the session.
#pragma once

#include <riomesh/actors/handshake/tls_context.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

class handshake {
 public:
  enum class state { running, secured, failed };
  // How the peer proved who it is.
  enum class proof { none, secret, key };
  // Messages under TLS are at most this long.
  static constexpr std::size_t max_message = 16 * 1024;

  // `dialer`: this side connected (the TLS client). `expected`: the node
  // the dialer means to reach (empty: whoever listens at the address).
  handshake(std::shared_ptr<const tls_context> ctx, bool dialer, std::string expected = {});
  ~handshake();
  handshake(handshake&&) noexcept;
  handshake& operator=(handshake&&) noexcept;

  // Takes up to n of the peer's bytes; returns how many it used.
  std::size_t feed(const unsigned char* p, std::size_t n);
  // Bytes to send now; take them after construction, feed() and send().
  std::vector<unsigned char> take_output();

  state current() const;
  bool dialer() const;
  // Why it failed, for both sides' logs.
  const std::string& reason() const;

  // Once secured. The name the peer's proof binds: by key, the one the
  // keyring lists for it; by secret, the dialer's name in its PSK (on the
  // acceptor) or the node dialed (on the dialer; empty by address).
  proof peer_proof() const;
  const std::string& proven_name() const;
  // On the acceptor: why it took no PSK the dialer offered (empty: it took
  // it, or none was offered), and the node the dialer meant, if another.
  const std::string& psk_declined() const;
  const std::string& meant() const;
  // Who the peer says it is before it proves anything, for messages only:
  // the node dialed, or the dialer's name in its PSK identity.
  const std::string& named() const;

  // On the acceptor, secured by the secret: asks the dialer for its
  // certificate too (TLS 1.3 post-handshake authentication), when it claims
  // a name the keyring lists. peer_proof() says what it proved once
  // certificate_pending() is over.
  void request_certificate();
  bool certificate_pending() const;

  // A message to the peer, sealed in TLS records (take_output()).
  void send(const std::vector<unsigned char>& message);
  // The peer's next message, once all of it is in.
  std::optional<std::vector<unsigned char>> receive();
  // Hands over the TLS connection (to protect the rest of the stream);
  // the caller frees it. Nothing may be fed after.
  ssl_st* release();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace riomesh::actors
