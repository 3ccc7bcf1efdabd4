// Making a cluster secret file: 32 random bytes, base64, readable by its
// owner only. What `riomesh secret` and the pub/sub launcher write; a node
// reads it through cluster.secret_file.
#pragma once

#include <string>

namespace riomesh::config {

// Creates `path` (and its folder, owner-only) holding a new secret; never
// overwrites. False with `error` naming the path and the reason.
bool make_secret_file(const std::string& path, std::string& error);

// The secret file a node file names (cluster.secret_file, resolved against
// the file's folder), without checking anything else; empty if it names
// none or cannot be read as YAML.
std::string secret_file_named_in(const std::string& node_file);

}  // namespace riomesh::config
