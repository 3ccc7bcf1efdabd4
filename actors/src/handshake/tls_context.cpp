#include <riomesh/actors/handshake/tls_context.hpp>

#include "psk_binding.hpp"

#include <riomesh/config/text.hpp>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstring>
#include <mutex>
#include <stdexcept>

namespace riomesh::actors {
namespace {

constexpr const char* psk_prefix = "riomesh/3 ";
constexpr const char* any_acceptor = "*";
// Both hash with SHA-256, which every PSK made here uses.
constexpr const char* suites = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256";
constexpr unsigned char aes_128_gcm_sha256[] = {0x13, 0x01};
// OpenSSL matches a PSK's session to the server's context by this.
constexpr unsigned char session_context[] = {'r', 'i', 'o', 'm', 'e', 's', 'h'};
// ALPN: a peer that speaks anything else is no riomesh node of this version.
constexpr unsigned char alpn[] = {9, 'r', 'i', 'o', 'm', 'e', 's', 'h', '/', '3'};

struct pkey_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct x509_free {
  void operator()(X509* x) const { X509_free(x); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;

std::string openssl_error(const std::string& what) {
  std::string out = what;
  while (auto e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    out += std::string(out == what ? ": " : "; ") + text;
  }
  return out;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(openssl_error("TLS setup: " + what));
}

// The certificate a node presents: its node key's, or one made for this
// run. Self-signed; what it says beyond its key is never trusted (peers pin
// the key), so it names the node only for whoever looks at a capture.
x509_ptr certificate_for(EVP_PKEY* key, const std::string& name) {
  x509_ptr x{X509_new()};
  if (!x || X509_set_version(x.get(), 2) != 1)
    fail("X509_new");
  unsigned char serial[8];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -24 * 3600);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 100L * 365 * 24 * 3600);
  X509_NAME* subject = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509_set_issuer_name(x.get(), subject);
  if (X509_set_pubkey(x.get(), key) != 1 || X509_sign(x.get(), key, nullptr) <= 0)
    fail("cannot sign the node's certificate");
  return x;
}

pkey_ptr key_for(const credentials& c) {
  if (c.key) {
    const auto& seed = c.key->seed();
    return pkey_ptr{EVP_PKEY_new_raw_private_key(
        EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(seed.data()),
        seed.size())};
  }
  pkey_ptr k;
  EVP_PKEY* raw = nullptr;
  EVP_PKEY_CTX* g = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  if (g && EVP_PKEY_keygen_init(g) == 1 && EVP_PKEY_keygen(g, &raw) == 1)
    k.reset(raw);
  EVP_PKEY_CTX_free(g);
  return k;
}

// Certificates are judged after the handshake, by the key the keyring
// pins (trust_rules.hpp): there is no chain to check, and a peer that
// presents none, or one nobody lists, is told why in band.
int accept_any(int, X509_STORE_CTX*) {
  return 1;
}

SSL_SESSION* session_with(SSL* ssl, const std::array<unsigned char, 32>& key) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, aes_128_gcm_sha256);
  SSL_SESSION* s = SSL_SESSION_new();
  if (!s || !cipher || SSL_SESSION_set1_master_key(s, key.data(), key.size()) != 1 ||
      SSL_SESSION_set_cipher(s, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION) != 1 ||
      SSL_SESSION_set1_id_context(s, session_context, sizeof session_context) != 1) {
    SSL_SESSION_free(s);
    return nullptr;
  }
  return s;
}

// The dialer offers the PSK of its pair, unless it has no secret, or the
// node it dials must prove its name with its key (the keyring lists it).
int use_psk(SSL* ssl, const EVP_MD* md, const unsigned char** id, std::size_t* idlen,
            SSL_SESSION** sess) {
  *sess = nullptr;
  auto* b = binding_of(ssl);
  if (!b || !b->ctx)
    return 1;
  const auto& c = b->ctx->creds();
  if (c.secret.empty() || c.trusted.count(b->expected) || (md && EVP_MD_get_type(md) != NID_sha256))
    return 1;
  b->identity = psk_identity(b->ctx->node_name(), b->expected);
  *sess = session_with(ssl, psk_of(c.secret, b->identity));
  if (!*sess)
    return 0;
  *id = reinterpret_cast<const unsigned char*>(b->identity.data());
  *idlen = b->identity.size();
  return 1;
}

// The acceptor takes a PSK meant for itself (or a dial by address). Anything
// else it declines, noting why: the handshake then goes on with
// certificates, and the peer is judged by what it proved. (A dialer whose
// name the keyring lists proves its key after the handshake as well:
// handshake::request_certificate.)
int find_psk(SSL* ssl, const unsigned char* id, std::size_t idlen, SSL_SESSION** sess) {
  *sess = nullptr;
  auto* b = binding_of(ssl);
  if (!b || !b->ctx)
    return 1;
  const auto& c = b->ctx->creds();
  std::string identity(reinterpret_cast<const char*>(id), idlen);
  if (c.secret.empty()) {
    b->declined = "the dialer offers a cluster secret, and this node has none";
    return 1;
  }
  std::size_t prefix = std::strlen(psk_prefix);
  auto space = identity.find(' ', prefix);
  if (identity.compare(0, prefix, psk_prefix) != 0 || space == std::string::npos) {
    b->declined = "a PSK identity not of this version ('" + config::printable(identity) + "')";
    return 1;
  }
  auto dialer = identity.substr(prefix, space - prefix);
  auto acceptor = identity.substr(space + 1);
  if (!config::is_node_name(dialer)) {
    b->declined = "a PSK identity with no valid node name";
    return 1;
  }
  b->named = dialer;
  if (acceptor != any_acceptor && acceptor != b->ctx->node_name()) {
    b->declined = "the dialer meant node '" + config::printable(acceptor) + "'";
    if (config::is_node_name(acceptor))
      b->meant = acceptor;
    return 1;
  }
  *sess = session_with(ssl, psk_of(c.secret, identity));
  if (!*sess)
    return 0;
  b->dialer_named = dialer;
  return 1;
}

int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                unsigned int inlen, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, outlen, alpn, sizeof alpn, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

SSL_CTX* make_ctx(bool client, EVP_PKEY* key, X509* cert) {
  SSL_CTX* ctx = SSL_CTX_new(client ? TLS_client_method() : TLS_server_method());
  if (!ctx)
    fail("SSL_CTX_new");
  bool ok = SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1 &&
            SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
            SSL_CTX_set_ciphersuites(ctx, suites) == 1 && SSL_CTX_use_certificate(ctx, cert) == 1 &&
            SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
  if (!ok) {
    SSL_CTX_free(ctx);
    fail("cannot configure TLS 1.3");
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_session_id_context(ctx, session_context, sizeof session_context);
  // Idle connections give their record buffers back; no tickets: nothing
  // follows the handshake but what the session sends.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  if (client) {
    // After a PSK handshake the acceptor may still ask for our certificate.
    SSL_CTX_set_post_handshake_auth(ctx, 1);
    SSL_CTX_set_psk_use_session_callback(ctx, use_psk);
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn);
  } else {
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_psk_find_session_callback(ctx, find_psk);
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, nullptr);
  }
  return ctx;
}

}  // namespace

int psk_binding_index() {
  static int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

psk_binding* binding_of(ssl_st* ssl) {
  return static_cast<psk_binding*>(SSL_get_ex_data(ssl, psk_binding_index()));
}

std::string psk_identity(const std::string& dialer, const std::string& acceptor) {
  return psk_prefix + dialer + " " + (acceptor.empty() ? any_acceptor : acceptor);
}

std::array<unsigned char, 32> psk_of(const std::string& secret, const std::string& identity) {
  static const char salt[] = "riomesh cluster secret to TLS 1.3 PSK";
  std::array<unsigned char, 32> out{};
  std::size_t n = out.size();
  EVP_PKEY_CTX* k = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  bool ok = k && EVP_PKEY_derive_init(k) == 1 && EVP_PKEY_CTX_set_hkdf_md(k, EVP_sha256()) == 1 &&
            EVP_PKEY_CTX_set1_hkdf_salt(k, reinterpret_cast<const unsigned char*>(salt),
                                        sizeof salt - 1) == 1 &&
            EVP_PKEY_CTX_set1_hkdf_key(k, reinterpret_cast<const unsigned char*>(secret.data()),
                                       static_cast<int>(secret.size())) == 1 &&
            EVP_PKEY_CTX_add1_hkdf_info(k, reinterpret_cast<const unsigned char*>(identity.data()),
                                        static_cast<int>(identity.size())) == 1 &&
            EVP_PKEY_derive(k, out.data(), &n) == 1 && n == out.size();
  EVP_PKEY_CTX_free(k);
  if (!ok)
    fail("HKDF of the cluster secret");
  return out;
}

tls_context::tls_context(std::string node_name, credentials creds)
    : name_(std::move(node_name)), creds_(std::move(creds)) {
  psk_binding_index();  // made once, before any connection races for it
  pkey_ptr key = key_for(creds_);
  if (!key)
    fail("no Ed25519 key for the node's certificate");
  x509_ptr cert = certificate_for(key.get(), name_);
  client_ = make_ctx(true, key.get(), cert.get());
  try {
    server_ = make_ctx(false, key.get(), cert.get());
  } catch (...) {
    SSL_CTX_free(client_);
    throw;
  }
  SSL_CTX_set_app_data(client_, this);
  SSL_CTX_set_app_data(server_, this);
}

tls_context::~tls_context() {
  SSL_CTX_free(client_);
  SSL_CTX_free(server_);
}

ssl_st* tls_context::open(bool dialer) const {
  SSL* ssl = SSL_new(dialer ? client_ : server_);
  if (!ssl)
    throw std::runtime_error(openssl_error("TLS: SSL_new"));
  return ssl;
}

const std::string* tls_context::name_of(const public_key& key) const {
  for (const auto& [name, k] : creds_.trusted)
    if (k == key)
      return &name;
  return nullptr;
}

}  // namespace riomesh::actors
