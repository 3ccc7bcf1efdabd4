#include <riomesh/actors/handshake/handshake.hpp>

#include "psk_binding.hpp"

#include <riomesh/channels/wire/byte_order.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>

namespace riomesh::actors {
namespace {

constexpr std::size_t record_header = 5;
// TLS 1.3's largest protected record (RFC 8446, 5.2).
constexpr std::size_t max_record = (1u << 14) + 256;

bool tls_record_type(unsigned char t) {
  return t >= 20 && t <= 23;  // change_cipher_spec, alert, handshake, application_data
}

// OpenSSL's reasons for a failed handshake, in words that say what to fix.
std::string failure_text(bool dialer, const std::string& declined, bool offered_psk) {
  std::string raw;
  int reason = 0;
  while (auto e = ERR_get_error()) {
    if (!reason)
      reason = ERR_GET_REASON(e);
    const char* text = ERR_reason_error_string(e);
    raw += std::string(raw.empty() ? "" : "; ") + (text ? text : "unknown OpenSSL error");
  }
  switch (reason) {
    case SSL_R_BINDER_DOES_NOT_VERIFY:
      return "wrong cluster secret (the dialer's proof of it does not match this node's)";
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
    case SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER:
      // OpenSSL answers a PSK binder that does not verify with the latter.
      if (dialer && offered_psk)
        return "wrong cluster secret (the acceptor refused this node's proof of it)";
      break;
    case SSL_R_NO_APPLICATION_PROTOCOL:
    case SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL:
      return "the peer does not speak riomesh/3 (a riomesh node of another version?)";
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      return "not a riomesh node: it does not speak TLS 1.3 (" + raw + ")";
    default:
      break;
  }
  return "TLS handshake failed: " + (raw.empty() ? std::string{"no reason given"} : raw) +
         (declined.empty() ? std::string{}
                           : " (its cluster secret was not used: " + declined + ")");
}

}  // namespace

struct handshake::impl {
  std::shared_ptr<const tls_context> ctx;
  SSL* ssl = nullptr;
  BIO* in = nullptr;   // the peer's records, fed whole
  BIO* out = nullptr;  // ours, taken by take_output()
  psk_binding binding;
  state st = state::running;
  std::string reason;
  proof how = proof::none;
  std::string proven;
  std::vector<unsigned char> record;  // the record being fed, header first
  std::vector<unsigned char> plain;   // decrypted, not yet whole messages
  std::vector<std::vector<unsigned char>> ready;
  bool any_record = false;
  bool certificate_asked = false;

  void fail(std::string why) {
    if (st == state::failed)
      return;
    st = state::failed;
    reason = std::move(why);
  }

  // What the peer proved: a key the keyring lists (in the handshake, or
  // after it), else the secret, else nothing.
  void settle() {
    how = proof::none;
    proven.clear();
    if (SSL_session_reused(ssl)) {
      how = proof::secret;
      proven = binding.dialer ? binding.expected : binding.dialer_named;
    }
    X509* peer = SSL_get0_peer_certificate(ssl);
    EVP_PKEY* key = peer ? X509_get0_pubkey(peer) : nullptr;
    public_key raw{};
    std::size_t n = raw.size();
    if (key && EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 &&
        EVP_PKEY_get_raw_public_key(key, raw.data(), &n) == 1 && n == raw.size())
      if (const auto* name = ctx->name_of(raw)) {
        how = proof::key;
        proven = *name;
      }
  }

  void drive() {
    if (st == state::running) {
      ERR_clear_error();
      int r = SSL_do_handshake(ssl);
      if (r != 1) {
        int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
          fail(failure_text(binding.dialer, binding.declined, !binding.identity.empty()));
        return;
      }
      st = state::secured;
      settle();
    }
    unsigned char buf[4096];
    for (;;) {
      ERR_clear_error();
      int r = SSL_read(ssl, buf, sizeof buf);
      if (r > 0) {
        plain.insert(plain.end(), buf, buf + r);
        continue;
      }
      int e = SSL_get_error(ssl, r);
      if (e == SSL_ERROR_ZERO_RETURN)
        fail("the peer closed its TLS session before the session started");
      else if (e != SSL_ERROR_WANT_READ)
        fail(failure_text(binding.dialer, binding.declined, !binding.identity.empty()));
      break;
    }
    if (certificate_asked && st == state::secured && !SSL_in_init(ssl)) {
      certificate_asked = false;  // its answer is in
      settle();
    }
    while (st != state::failed && plain.size() >= 4) {
      std::size_t length = wire::load_le<std::uint32_t>(plain.data());
      if (length > max_message)
        return fail("a session message of " + std::to_string(length) + " bytes (at most " +
                    std::to_string(max_message) + ")");
      if (plain.size() < 4 + length)
        break;
      ready.emplace_back(plain.begin() + 4, plain.begin() + 4 + static_cast<long>(length));
      plain.erase(plain.begin(), plain.begin() + 4 + static_cast<long>(length));
    }
  }
};

handshake::handshake(std::shared_ptr<const tls_context> ctx, bool dialer, std::string expected)
    : impl_(std::make_unique<impl>()) {
  auto& x = *impl_;
  x.ctx = std::move(ctx);
  x.binding.ctx = x.ctx.get();
  x.binding.dialer = dialer;
  x.binding.expected = std::move(expected);
  x.ssl = x.ctx->open(dialer);
  x.in = BIO_new(BIO_s_mem());
  x.out = BIO_new(BIO_s_mem());
  BIO_set_mem_eof_return(x.in, -1);  // empty means "more later", not end of stream
  SSL_set_bio(x.ssl, x.in, x.out);
  SSL_set_ex_data(x.ssl, psk_binding_index(), &x.binding);
  if (dialer)
    SSL_set_connect_state(x.ssl);
  else
    SSL_set_accept_state(x.ssl);
  x.drive();  // the dialer's ClientHello
}

handshake::~handshake() {
  if (impl_ && impl_->ssl)
    SSL_free(impl_->ssl);
}

handshake::handshake(handshake&&) noexcept = default;
handshake& handshake::operator=(handshake&&) noexcept = default;

std::size_t handshake::feed(const unsigned char* p, std::size_t n) {
  auto& x = *impl_;
  std::size_t used = 0;
  while (used < n && x.st != state::failed && x.ssl && x.ready.empty()) {
    std::size_t want = record_header;
    if (x.record.size() >= record_header)
      want += wire::load<std::uint16_t>(x.record.data() + 3, wire::byte_order::big);
    std::size_t k = std::min(want - x.record.size(), n - used);
    x.record.insert(x.record.end(), p + used, p + used + k);
    used += k;
    if (x.record.size() == record_header) {
      std::size_t length = wire::load<std::uint16_t>(x.record.data() + 3, wire::byte_order::big);
      if (!tls_record_type(x.record[0]) || x.record[1] != 3 || length > max_record) {
        x.fail(x.any_record ? "a malformed TLS record (type " + std::to_string(x.record[0]) + ", " +
                                  std::to_string(length) + " bytes)"
                            : "not a riomesh node: what it sent first is no TLS record");
        break;
      }
      continue;
    }
    if (x.record.size() < record_header || x.record.size() < want)
      continue;
    x.any_record = true;
    BIO_write(x.in, x.record.data(), static_cast<int>(x.record.size()));
    x.record.clear();
    x.drive();
  }
  return used;
}

std::vector<unsigned char> handshake::take_output() {
  std::vector<unsigned char> out;
  if (!impl_->out)
    return out;
  char* data = nullptr;
  long n = BIO_get_mem_data(impl_->out, &data);
  if (n > 0) {
    out.assign(data, data + n);
    (void)BIO_reset(impl_->out);
  }
  return out;
}

handshake::state handshake::current() const {
  return impl_->st;
}

bool handshake::dialer() const {
  return impl_->binding.dialer;
}

const std::string& handshake::reason() const {
  return impl_->reason;
}

handshake::proof handshake::peer_proof() const {
  return impl_->how;
}

const std::string& handshake::proven_name() const {
  return impl_->proven;
}

const std::string& handshake::psk_declined() const {
  return impl_->binding.declined;
}

const std::string& handshake::meant() const {
  return impl_->binding.meant;
}

const std::string& handshake::named() const {
  return impl_->binding.dialer ? impl_->binding.expected : impl_->binding.named;
}

void handshake::request_certificate() {
  auto& x = *impl_;
  if (x.st != state::secured || x.binding.dialer || x.certificate_asked)
    return;
  ERR_clear_error();
  if (SSL_verify_client_post_handshake(x.ssl) != 1)
    return x.fail(failure_text(false, x.binding.declined, false));
  x.certificate_asked = true;
  int r = SSL_do_handshake(x.ssl);  // writes the CertificateRequest
  if (r != 1) {
    int e = SSL_get_error(x.ssl, r);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
      x.fail(failure_text(false, x.binding.declined, false));
  }
}

bool handshake::certificate_pending() const {
  return impl_->certificate_asked;
}

void handshake::send(const std::vector<unsigned char>& message) {
  auto& x = *impl_;
  if (x.st != state::secured || !x.ssl)
    return;
  std::vector<unsigned char> framed;
  wire::append_le<std::uint32_t>(framed, static_cast<std::uint32_t>(message.size()));
  framed.insert(framed.end(), message.begin(), message.end());
  ERR_clear_error();
  if (SSL_write(x.ssl, framed.data(), static_cast<int>(framed.size())) <= 0)
    x.fail(failure_text(x.binding.dialer, x.binding.declined, !x.binding.identity.empty()));
}

std::optional<std::vector<unsigned char>> handshake::receive() {
  auto& x = *impl_;
  if (x.ready.empty())
    return std::nullopt;
  auto m = std::move(x.ready.front());
  x.ready.erase(x.ready.begin());
  return m;
}

ssl_st* handshake::release() {
  auto& x = *impl_;
  SSL* s = x.ssl;
  x.ssl = nullptr;
  x.in = x.out = nullptr;  // they went with it
  if (s)
    SSL_set_ex_data(s, psk_binding_index(), nullptr);
  return s;
}

}  // namespace riomesh::actors
