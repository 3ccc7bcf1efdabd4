// Who a peer is, judged from how it proved itself in the TLS handshake and
// the name it then claims: docs/security.md's rules in one place, without
// I/O. Both sides judge; a refusal is told to the peer with its reason.
//   - No peer may claim this node's own name.
//   - A name the keyring lists is proven by its key, and only by it.
//   - A key the keyring lists proves the name it lists, no other.
//   - The cluster secret proves membership: any name the keyring does not
//     list, bound into the PSK (the dialer's name, and the acceptor's when
//     the dialer named it).
//   - Without either, only a node that allows it (no secret, no keyring,
//     and loopback or insecure: true) accepts, and the peer is
//     unauthenticated.
#pragma once

#include <riomesh/actors/handshake/handshake.hpp>

#include <string>

namespace riomesh::actors {

struct peer_claim {
  bool we_dialed = false;
  std::string our_name;
  std::string expected;  // the node we dialed (empty: by address, or we accept)
  handshake::proof proof = handshake::proof::none;
  std::string proven;        // the name the proof binds (handshake::proven_name)
  std::string claimed;       // the name in its hello
  std::string psk_declined;  // acceptor: why it took no PSK the dialer offered
  std::string meant;         // acceptor: the node the dialer meant, if not this one
  const credentials* creds = nullptr;
  bool allow_unauthenticated = false;
};

struct peer_verdict {
  bool ok = false;
  std::string why;  // the refusal, for both sides' logs
  bool authenticated = false;
  bool admin = false;  // proven by a key the node's admins list
  // Refused because the address holds another node than the one meant:
  // asking again there gets the same answer.
  bool wrong_node = false;
};

peer_verdict judge(const peer_claim& c);

}  // namespace riomesh::actors
