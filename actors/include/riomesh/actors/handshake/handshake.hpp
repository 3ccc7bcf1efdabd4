// Mutual authentication of two riomesh nodes, before either exposes any
// arena to the other. Two proofs, either or both:
//   - the cluster secret: an HMAC-SHA256 over both sides' fresh nonces and
//     names, the sender's first, so a proof cannot be replayed on another
//     connection nor reflected back. Any member can make it for any name.
//   - a node key (node_key.hpp): an Ed25519 signature over the same, which
//     only the holder of the key listed for that name in the peer's
//     keyring can make. It binds the name to the key.
// Sans-IO: it takes the peer's bytes and gives the bytes to send.
//
//   HELLO  u32 magic "RMHS", u8 version (2), u8 flags (1: has a secret,
//          2: signs with a node key, 4: keeps a keyring), u16 name
//          length (1..64), 32-byte nonce, name (config::is_node_name)
//   PROOF  [32-byte HMAC-SHA256(secret, "riomesh proof v1" | sender nonce |
//          receiver nonce | sender name | receiver name), if both sides
//          have a secret] [64-byte Ed25519 signature of "riomesh sign v1" |
//          the same, if the sender signs]
//
// Without a secret and without keys on either side both are accepted
// unauthenticated (the acceptor decides whether that is allowed: loopback,
// or insecure: true); a secret on one side only is refused by both. A name
// a node's keyring lists must come with a valid signature by its key; any
// other name needs the cluster secret (so a keyring and a secret together
// admit clients such as `riomesh ping` by the secret alone, while no
// member can take a listed node's name).
#pragma once

#include <riomesh/actors/handshake/node_key.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

using nonce = std::array<unsigned char, 32>;
nonce random_nonce();  // from OpenSSL's RAND_bytes

// What a node proves itself with, and checks its peers against.
struct credentials {
  std::string secret;           // empty: none
  std::optional<node_key> key;  // signs this node's name
  keyring trusted;              // names whose peers must sign with the listed key
};

class handshake {
 public:
  enum class state { waiting, authenticated, unauthenticated, refused };

  // `name`: this node's (config::is_node_name).
  handshake(std::string name, credentials creds, const nonce& mine);
  // The shared secret only (empty: none).
  handshake(std::string name, std::string secret, const nonce& mine);

  // Bytes to send now (the HELLO at first, the PROOF once the peer's HELLO
  // is in); empty if none. Take them after construction and after feed().
  std::vector<unsigned char> take_output();
  // Takes up to n of the peer's bytes; returns how many it used (it stops
  // when done, leaving the rest for whoever reads the stream next).
  std::size_t feed(const unsigned char* p, std::size_t n);

  state current() const { return state_; }
  bool done() const { return state_ != state::waiting; }
  const std::string& peer_name() const { return peer_name_; }
  // The peer proved its name with the key our keyring lists for it.
  bool name_proven() const { return name_proven_; }
  // Why it was refused, for both sides' logs.
  const std::string& reason() const { return reason_; }

 private:
  std::vector<unsigned char> transcript(const char* label, const nonce& first, const nonce& second,
                                        const std::string& first_name,
                                        const std::string& second_name) const;
  std::array<unsigned char, 32> hmac(const std::vector<unsigned char>& message) const;
  void on_hello();
  void on_proof();
  void refuse(const std::string& why);

  std::string name_;
  credentials creds_;
  nonce mine_{}, theirs_{};
  std::string peer_name_;
  std::uint8_t peer_flags_ = 0;
  bool hmac_expected_ = false, signature_expected_ = false;
  bool name_proven_ = false;
  state state_ = state::waiting;
  std::string reason_;
  std::vector<unsigned char> in_, out_;
  std::size_t need_;  // bytes of the current message
  enum class stage { hello_head, hello_name, proof } stage_ = stage::hello_head;
};

}  // namespace riomesh::actors
