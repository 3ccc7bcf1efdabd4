// A node's TLS 1.3 setup, made once at start and shared by all its
// connections (OpenSSL makes connections from one SSL_CTX on any thread).
// A peer proves itself in one standard TLS 1.3 handshake, one of three ways:
//   - a node key: an Ed25519 certificate made from the key at start, whose
//     public key the keyring pins to a name. TLS's CertificateVerify signs
//     the handshake transcript (both ends' randoms and key shares), so a
//     proof is bound to this connection and to its role.
//   - the cluster secret: an external PSK (RFC 8446, 4.2.11), one per
//     ordered pair of names: HKDF-SHA256 of the secret over the identity
//     "riomesh/3 DIALER ACCEPTOR". Only with an (EC)DHE exchange, so every
//     session has keys of its own.
//   - nothing: a certificate made for this run that no keyring lists
//     (unauthenticated; the acceptor's policy decides).
// Who the peer is then follows from how it proved itself (trust_rules.hpp).
#pragma once

#include <riomesh/actors/handshake/node_key.hpp>

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>

struct ssl_st;
struct ssl_ctx_st;

namespace riomesh::actors {

// What a node proves itself with, and checks its peers against.
struct credentials {
  std::string secret;            // empty: none
  std::optional<node_key> key;   // signs this node's handshakes
  keyring trusted;               // names whose peers must prove them with the listed key
  std::set<std::string> admins;  // keyring names that may control this node
};

// The PSK identity a dialer offers, and its key: bound to both names and
// to who dials whom. `acceptor` empty: a dial by address ("*").
std::string psk_identity(const std::string& dialer, const std::string& acceptor);
std::array<unsigned char, 32> psk_of(const std::string& secret, const std::string& identity);

class tls_context {
 public:
  // Throws std::runtime_error with OpenSSL's words if it cannot be set up.
  tls_context(std::string node_name, credentials creds);
  ~tls_context();
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  const std::string& node_name() const { return name_; }
  const credentials& creds() const { return creds_; }
  // A new TLS connection, as the dialer (client) or the acceptor (server);
  // the caller frees it (SSL_free).
  ssl_st* open(bool dialer) const;
  // The name the keyring pins `key` to; null if it lists no such key.
  const std::string* name_of(const public_key& key) const;

 private:
  std::string name_;
  credentials creds_;
  ssl_ctx_st* client_ = nullptr;
  ssl_ctx_st* server_ = nullptr;
};

}  // namespace riomesh::actors
