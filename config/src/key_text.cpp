#include <riomesh/config/key_text.hpp>

#include <cctype>
#include <cstdint>

namespace riomesh::config {
namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The fixed DER wrappings of Ed25519 keys (RFC 8410): OID 1.3.101.112.
constexpr unsigned char pkcs8_prefix[] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
                                          0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
constexpr unsigned char spki_prefix[] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                         0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

bool starts_with(const std::string& der, const unsigned char* prefix, std::size_t n) {
  return der.size() == n + 32 && der.compare(0, n, reinterpret_cast<const char*>(prefix), n) == 0;
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0, pad = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)))
      continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad)
      return std::nullopt;  // data after padding
    const char* at = nullptr;
    for (const char* a = alphabet; *a; ++a)
      if (*a == c)
        at = a;
    if (!at)
      return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(at - alphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (pad > 2)
    return std::nullopt;
  return out;
}

std::string encode_base64(std::string_view bytes) {
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16 |
                      static_cast<unsigned char>(bytes[i + 1]) << 8 |
                      static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6)
      out.push_back(alphabet[(v >> s) & 63]);
  }
  if (i < bytes.size()) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size())
      v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(alphabet[(v >> 18) & 63]);
    out.push_back(alphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string parse_private_key(std::string_view pem, std::string& error) {
  constexpr std::string_view begin = "-----BEGIN PRIVATE KEY-----";
  constexpr std::string_view end = "-----END PRIVATE KEY-----";
  auto b = pem.find(begin), e = pem.find(end);
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) {
    error = "not a PEM private key (no BEGIN/END PRIVATE KEY lines)";
    return {};
  }
  auto der = decode_base64(pem.substr(b + begin.size(), e - b - begin.size()));
  if (!der) {
    error = "the PEM body is not base64";
    return {};
  }
  if (!starts_with(*der, pkcs8_prefix, sizeof pkcs8_prefix)) {
    error = "not an Ed25519 private key (make one with: riomesh keygen NAME)";
    return {};
  }
  return der->substr(sizeof pkcs8_prefix);
}

std::string parse_public_key(std::string_view base64, std::string& error) {
  auto der = decode_base64(base64);
  if (!der) {
    error = "not base64";
    return {};
  }
  if (der->size() == 32)
    return *der;
  if (starts_with(*der, spki_prefix, sizeof spki_prefix))
    return der->substr(sizeof spki_prefix);
  error = "not an Ed25519 public key (" + std::to_string(der->size()) +
          " bytes; expected 32, or the 44 of its DER form)";
  return {};
}

std::string private_key_pem(std::string_view seed) {
  std::string der(reinterpret_cast<const char*>(pkcs8_prefix), sizeof pkcs8_prefix);
  der.append(seed);
  return "-----BEGIN PRIVATE KEY-----\n" + encode_base64(der) + "\n-----END PRIVATE KEY-----\n";
}

std::string public_key_text(std::string_view key) {
  return encode_base64(key);
}

}  // namespace riomesh::config
