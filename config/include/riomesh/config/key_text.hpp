// Node keys as text: Ed25519 keys in the forms OpenSSL writes them, so a
// user may make them with `openssl genpkey -algorithm ed25519` as well as
// with `riomesh keygen`. Private: a PEM "PRIVATE KEY" (PKCS#8). Public: the
// base64 of either the raw 32 bytes or the DER SubjectPublicKeyInfo (what
// `openssl pkey -pubout` prints between its PEM lines).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace riomesh::config {

std::optional<std::string> decode_base64(std::string_view text);
std::string encode_base64(std::string_view bytes);

// The 32-byte seed of a PEM Ed25519 private key; empty with `error` set.
std::string parse_private_key(std::string_view pem, std::string& error);
// The 32-byte public key; empty with `error` set.
std::string parse_public_key(std::string_view base64, std::string& error);

// The PEM text of a 32-byte seed, and the base64 (raw) of a public key.
std::string private_key_pem(std::string_view seed);
std::string public_key_text(std::string_view key);

}  // namespace riomesh::config
