// Ed25519 node keys. A node that has one signs its handshake, and a peer
// checks the signature with the public key its keyring lists for the name
// the node claims: the name is then bound to the key, not only to a secret
// every member of the cluster shares.
#pragma once

#include <array>
#include <map>
#include <string>

namespace riomesh::actors {

using public_key = std::array<unsigned char, 32>;
using key_signature = std::array<unsigned char, 64>;
// The public keys a node trusts, by node name.
using keyring = std::map<std::string, public_key>;

class node_key {
 public:
  // From the 32-byte private seed (as config::node_settings holds it);
  // throws std::invalid_argument for another length.
  static node_key from_seed(const std::string& seed);
  static node_key generate();  // from OpenSSL's random bytes

  const std::string& seed() const { return seed_; }
  const public_key& public_part() const { return public_; }
  key_signature sign(const unsigned char* message, std::size_t length) const;

 private:
  std::string seed_;
  public_key public_{};
};

bool verify(const public_key& key, const unsigned char* message, std::size_t length,
            const key_signature& sig);

}  // namespace riomesh::actors
