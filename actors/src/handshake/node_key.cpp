#include <riomesh/actors/handshake/node_key.hpp>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

namespace riomesh::actors {
namespace {

struct pkey_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct md_free {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using md_ptr = std::unique_ptr<EVP_MD_CTX, md_free>;

pkey_ptr private_of(const std::string& seed) {
  pkey_ptr k{EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(seed.data()), seed.size())};
  if (!k)
    throw std::runtime_error("OpenSSL cannot make an Ed25519 key from this seed");
  return k;
}

}  // namespace

node_key node_key::from_seed(const std::string& seed) {
  if (seed.size() != 32)
    throw std::invalid_argument("an Ed25519 private key is 32 bytes, not " +
                                std::to_string(seed.size()));
  node_key out;
  out.seed_ = seed;
  auto k = private_of(seed);
  std::size_t n = out.public_.size();
  if (EVP_PKEY_get_raw_public_key(k.get(), out.public_.data(), &n) != 1 || n != 32)
    throw std::runtime_error("OpenSSL cannot derive the Ed25519 public key");
  return out;
}

node_key node_key::generate() {
  std::string seed(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed.data()), 32) != 1)
    throw std::runtime_error("no random bytes for a node key (OpenSSL RAND_bytes)");
  return from_seed(seed);
}

key_signature node_key::sign(const unsigned char* message, std::size_t length) const {
  auto k = private_of(seed_);
  md_ptr ctx{EVP_MD_CTX_new()};
  key_signature sig{};
  std::size_t n = sig.size();
  // Ed25519 hashes the message itself: no digest is named.
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, k.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig.data(), &n, message, length) != 1 || n != sig.size())
    throw std::runtime_error("OpenSSL could not sign with the node key");
  return sig;
}

bool verify(const public_key& key, const unsigned char* message, std::size_t length,
            const key_signature& sig) {
  pkey_ptr k{EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size())};
  md_ptr ctx{EVP_MD_CTX_new()};
  return k && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, k.get()) == 1 &&
         EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), message, length) == 1;
}

}  // namespace riomesh::actors
