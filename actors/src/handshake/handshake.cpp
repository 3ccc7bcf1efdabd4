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
constexpr std::uint8_t version = 1;
constexpr std::size_t hello_head = 4 + 1 + 1 + 2 + 32;
constexpr std::size_t proof_size = 32;
constexpr char proof_label[] = "riomesh proof v1";

}  // namespace

nonce random_nonce() {
  nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1)
    throw std::runtime_error("no random bytes for a handshake nonce (OpenSSL RAND_bytes)");
  return n;
}

handshake::handshake(std::string name, std::string secret, const nonce& mine)
    : name_(std::move(name)), secret_(std::move(secret)), mine_(mine), need_(hello_head) {
  if (name_.size() > 255)
    name_.resize(255);
  wire::append_le<std::uint32_t>(out_, magic);
  out_.push_back(version);
  out_.push_back(secret_.empty() ? 0 : 1);
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
      peer_has_secret_ = in_[5] & 1;
      std::copy(in_.begin() + 8, in_.begin() + 40, theirs_.begin());
      std::size_t name_len = wire::load_le<std::uint16_t>(in_.data() + 6);
      in_.clear();
      stage_ = stage::hello_name;
      need_ = name_len;
      if (name_len == 0 || name_len > 64) {
        refuse("bad node name length " + std::to_string(name_len));
        break;
      }
    } else if (stage_ == stage::hello_name) {
      std::string name(in_.begin(), in_.end());
      in_.clear();
      if (!config::is_node_name(name)) {
        refuse("node name '" + config::printable(name) + "' is not valid: " +
               config::node_name_rule);
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
  if (secret_.empty() && !peer_has_secret_) {
    state_ = state::unauthenticated;
    return;
  }
  if (secret_.empty()) {
    refuse("the peer requires a cluster secret and this node has none");
    return;
  }
  if (!peer_has_secret_) {
    refuse("the peer has no cluster secret and this node requires one");
    return;
  }
  auto p = proof(mine_, theirs_, name_, peer_name_);
  out_.insert(out_.end(), p.begin(), p.end());
  stage_ = stage::proof;
  need_ = proof_size;
}

void handshake::on_proof() {
  auto want = proof(theirs_, mine_, peer_name_, name_);
  if (CRYPTO_memcmp(want.data(), in_.data(), proof_size) != 0)
    refuse("wrong cluster secret (the peer's proof does not match)");
  else
    state_ = state::authenticated;
  in_.clear();
}

std::array<unsigned char, 32> handshake::proof(const nonce& first, const nonce& second,
                                               const std::string& first_name,
                                               const std::string& second_name) const {
  std::vector<unsigned char> msg(proof_label, proof_label + sizeof proof_label - 1);
  msg.insert(msg.end(), first.begin(), first.end());
  msg.insert(msg.end(), second.begin(), second.end());
  // Lengths first: ("ab", "c") and ("a", "bc") must not collide.
  msg.push_back(static_cast<unsigned char>(first_name.size()));
  msg.insert(msg.end(), first_name.begin(), first_name.end());
  msg.push_back(static_cast<unsigned char>(second_name.size()));
  msg.insert(msg.end(), second_name.begin(), second_name.end());
  std::array<unsigned char, 32> out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), msg.data(), msg.size(),
       out.data(), &len);
  return out;
}

void handshake::refuse(const std::string& why) {
  state_ = state::refused;
  reason_ = why;
}

}  // namespace riomesh::actors
