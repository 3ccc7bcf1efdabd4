// What tls_context's PSK callbacks know of one connection: attached to its
// SSL as ex_data by the handshake, read and filled in by the callbacks
// (OpenSSL calls them with nothing but the SSL).
#pragma once

#include <string>

struct ssl_st;

namespace riomesh::actors {

class tls_context;

struct psk_binding {
  const tls_context* ctx = nullptr;
  bool dialer = false;
  std::string expected;      // dialer: the node it dials (empty: by address)
  std::string identity;      // dialer: what it offered (OpenSSL reads it later)
  std::string dialer_named;  // acceptor: the dialer's name in the PSK it took
  std::string declined;      // acceptor: why it took no PSK the dialer offered
  std::string meant;         // acceptor: the node the dialer meant, if not this one
  std::string named;         // acceptor: the dialer's name in its PSK identity, unproven
};

// ex_data slot of every SSL for its binding.
int psk_binding_index();
psk_binding* binding_of(ssl_st* ssl);

}  // namespace riomesh::actors
