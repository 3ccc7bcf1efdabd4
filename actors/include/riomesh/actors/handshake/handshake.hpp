// Mutual authentication of two riomesh nodes, before either exposes any
// arena to the other: each proves it knows the cluster secret by an
// HMAC-SHA256 over both sides' fresh nonces and names, the sender's first,
// so a proof cannot be replayed on another connection nor reflected back.
// Sans-IO: it takes the peer's bytes and gives the bytes to send.
//
//   HELLO  u32 magic "RMHS", u8 version, u8 flags (1: has a secret),
//          u16 name length, 32-byte nonce, name
//   PROOF  32-byte HMAC-SHA256(secret, "riomesh proof v1" | sender nonce |
//          receiver nonce | sender name | receiver name)  (only if both
//          sides have a secret)
//
// Without a secret on either side both are accepted unauthenticated (the
// acceptor decides whether that is allowed: loopback, or insecure: true);
// a secret on one side only is refused by both.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace riomesh::actors {

using nonce = std::array<unsigned char, 32>;
nonce random_nonce();  // from OpenSSL's RAND_bytes

class handshake {
 public:
  enum class state { waiting, authenticated, unauthenticated, refused };

  // `secret` empty: this node has none. `name`: this node's, up to 255 bytes.
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
  // Why it was refused, for both sides' logs.
  const std::string& reason() const { return reason_; }

 private:
  std::array<unsigned char, 32> proof(const nonce& first, const nonce& second,
                                      const std::string& first_name,
                                      const std::string& second_name) const;
  void on_hello();
  void on_proof();
  void refuse(const std::string& why);

  std::string name_, secret_;
  nonce mine_{}, theirs_{};
  std::string peer_name_;
  bool peer_has_secret_ = false;
  state state_ = state::waiting;
  std::string reason_;
  std::vector<unsigned char> in_, out_;
  std::size_t need_;  // bytes of the current message
  enum class stage { hello_head, hello_name, proof } stage_ = stage::hello_head;
};

}  // namespace riomesh::actors
