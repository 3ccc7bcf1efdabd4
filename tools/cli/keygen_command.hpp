#pragma once

#include <riomesh/config/command_line.hpp>

namespace riomesh::cli {

extern const char* const keygen_usage;
extern const char* const secret_usage;

// `riomesh keygen NAME [--out FILE]`: a new Ed25519 node key. Writes the
// private key (PEM, mode 0600; never over an existing file) and prints the
// keyring line "NAME BASE64-KEY" for the other nodes. Exit 0, 1 if the file
// cannot be written, 2 for usage.
int keygen_command(const config::command_line& cmd);
// `riomesh secret FILE`: a new cluster secret (32 random bytes, base64,
// mode 0600, never over an existing file). Exit 0, 1 if it cannot be
// written, 2 for usage.
int secret_command(const config::command_line& cmd);

}  // namespace riomesh::cli
