#include <riomesh/actors/handshake/handshake.hpp>

#include <riomesh/channels/wire/byte_order.hpp>
#include <riomesh/config/text.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace riomesh::actors {
namespace {

constexpr std::uint32_t magic = 0x53484d52;  // "RMHS" as little-endian bytes
constexpr std::uint8_t version = 2;
// requires_signature: the sender keeps a keyring (informational: it
// refuses a listed name that does not sign).
constexpr std::uint8_t has_secret = 1, signs = 2, requires_signature = 4;
constexpr std::size_t hello_head = 4 + 1 + 1 + 2 + 32;
constexpr std::size_t hmac_size = 32;
constexpr std::size_t max_name = 64;

}  // namespace

nonce random_nonce() {
  nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1)
    throw std::runtime_error("no random bytes for a handshake nonce (OpenSSL RAND_bytes)");
  return n;
}

handshake::handshake(std::string name, std::string secret, const nonce& mine)
    : handshake(std::move(name), credentials{std::move(secret), {}, {}}, mine) {}

handshake::handshake(std::string name, credentials creds, const nonce& mine)
    : name_(std::move(name)), creds_(std::move(creds)), mine_(mine), need_(hello_head) {
  if (name_.size() > max_name)
    name_.resize(max_name);
  std::uint8_t flags = (creds_.secret.empty() ? 0 : has_secret) | (creds_.key ? signs : 0) |
                       (creds_.trusted.empty() ? 0 : requires_signature);
  wire::append_le<std::uint32_t>(out_, magic);
  out_.push_back(version);
  out_.push_back(flags);
  wire::append_le<std::uint16_t>(out_, static_cast<std::uint16_t>(name_.size()));
  out_.insert(out_.end(), mine_.begin(), mine_.end());
  out_.insert(out_.end(), name_.begin(), name_.end());
}

std::vector<unsigned char> handshake::take_output() {
  return std::exchange(out_, {});
}

std::size_t handshake::feed(const unsigned char* p, std::size_t n) {
  std::size_t used = 0;
  while (used < n && state_ == state::waiting) {
    std::size_t k = std::min(need_ - in_.size(), n - used);
    in_.insert(in_.end(), p + used, p + used + k);
    used += k;
    if (in_.size() < need_)
      break;
    if (stage_ == stage::hello_head) {
      if (wire::load_le<std::uint32_t>(in_.data()) != magic) {
        refuse("not a riomesh node (no handshake greeting)");
        break;
      }
      if (in_[4] != version) {
        refuse("handshake version " + std::to_string(in_[4]) + ", this node speaks " +
               std::to_string(version));
        break;
      }
      peer_flags_ = in_[5];
      if (peer_flags_ & ~(has_secret | signs | requires_signature)) {
        refuse("unknown handshake flags " + std::to_string(peer_flags_));
        break;
      }
      std::copy(in_.begin() + 8, in_.begin() + 40, theirs_.begin());
      std::size_t name_len = wire::load_le<std::uint16_t>(in_.data() + 6);
      in_.clear();
      stage_ = stage::hello_name;
      need_ = name_len;
      if (name_len == 0 || name_len > max_name) {
        refuse("bad node name length " + std::to_string(name_len));
        break;
      }
    } else if (stage_ == stage::hello_name) {
      std::string name(in_.begin(), in_.end());
      in_.clear();
      if (!config::is_node_name(name)) {
        refuse("node name '" + config::printable(name) +
               "' is not valid: " + config::node_name_rule);
        break;
      }
      peer_name_ = std::move(name);
      on_hello();
    } else {
      on_proof();
    }
  }
  return used;
}

void handshake::on_hello() {
  if (theirs_ == mine_) {
    refuse("the peer echoed our nonce (a reflection, or a connection to ourselves)");
    return;
  }
  bool peer_secret = peer_flags_ & has_secret, peer_signs = peer_flags_ & signs;
  if (creds_.secret.empty() && peer_secret) {
    refuse("the peer requires a cluster secret and this node has none");
    return;
  }
  if (!creds_.secret.empty() && !peer_secret) {
    refuse("the peer has no cluster secret and this node requires one");
    return;
  }
  // A name the keyring lists must be proven with its key; any other name
  // only by the secret, if there is one.
  if (creds_.trusted.count(peer_name_) && !peer_signs) {
    refuse("node '" + peer_name_ +
           "' is in this node's keyring but does not sign its handshake (node.key_file)");
    return;
  }
  if (!creds_.trusted.empty() && !creds_.trusted.count(peer_name_) && creds_.secret.empty()) {
    refuse("no key for node '" + peer_name_ +
           "' in this node's keyring, and no cluster secret to accept it by");
    return;
  }
  hmac_expected_ = peer_secret;
  signature_expected_ = peer_signs;
  if (!hmac_expected_ && !signature_expected_ && !creds_.key) {
    state_ = state::unauthenticated;
    return;
  }
  if (hmac_expected_) {
    auto p = hmac(transcript("riomesh proof v1", mine_, theirs_, name_, peer_name_));
    out_.insert(out_.end(), p.begin(), p.end());
  }
  if (creds_.key) {
    auto t = transcript("riomesh sign v1", mine_, theirs_, name_, peer_name_);
    auto sig = creds_.key->sign(t.data(), t.size());
    out_.insert(out_.end(), sig.begin(), sig.end());
  }
  stage_ = stage::proof;
  need_ = (hmac_expected_ ? hmac_size : 0) + (signature_expected_ ? key_signature{}.size() : 0);
  if (need_ == 0)  // we sign, the peer neither signs nor shares a secret
    state_ = state::unauthenticated;
}

void handshake::on_proof() {
  const unsigned char* at = in_.data();
  if (hmac_expected_) {
    auto want = hmac(transcript("riomesh proof v1", theirs_, mine_, peer_name_, name_));
    if (CRYPTO_memcmp(want.data(), at, hmac_size) != 0) {
      refuse("wrong cluster secret (the peer's proof does not match)");
      return;
    }
    at += hmac_size;
  }
  if (signature_expected_) {
    auto key = creds_.trusted.find(peer_name_);
    if (key != creds_.trusted.end()) {
      key_signature sig;
      std::memcpy(sig.data(), at, sig.size());
      auto t = transcript("riomesh sign v1", theirs_, mine_, peer_name_, name_);
      if (!verify(key->second, t.data(), t.size(), sig)) {
        refuse("node '" + peer_name_ +
               "': its signature does not match its key in this node's keyring (an impostor, "
               "or a wrong key)");
        return;
      }
      name_proven_ = true;
    }
  }
  in_.clear();
  state_ = hmac_expected_ || name_proven_ ? state::authenticated : state::unauthenticated;
}

std::vector<unsigned char> handshake::transcript(const char* label, const nonce& first,
                                                 const nonce& second, const std::string& first_name,
                                                 const std::string& second_name) const {
  std::vector<unsigned char> msg(label, label + std::strlen(label));
  msg.insert(msg.end(), first.begin(), first.end());
  msg.insert(msg.end(), second.begin(), second.end());
  // Lengths first: ("ab", "c") and ("a", "bc") must not collide.
  msg.push_back(static_cast<unsigned char>(first_name.size()));
  msg.insert(msg.end(), first_name.begin(), first_name.end());
  msg.push_back(static_cast<unsigned char>(second_name.size()));
  msg.insert(msg.end(), second_name.begin(), second_name.end());
  return msg;
}

std::array<unsigned char, 32> handshake::hmac(const std::vector<unsigned char>& message) const {
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), creds_.secret.data(), static_cast<int>(creds_.secret.size()), message.data(),
       message.size(), out.data(), &len);
  return out;
}

void handshake::refuse(const std::string& why) {
  state_ = state::refused;
  reason_ = why;
}

}  // namespace riomesh::actors
