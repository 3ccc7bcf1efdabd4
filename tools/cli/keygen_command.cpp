#include "keygen_command.hpp"

#include "arguments.hpp"

#include <riomesh/actors/handshake/node_key.hpp>
#include <riomesh/config/key_text.hpp>
#include <riomesh/config/secret_file.hpp>
#include <riomesh/config/text.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

namespace riomesh::cli {

const char* const keygen_usage =
    "  keygen NAME [--out FILE]       a new node key: writes FILE (default NAME.key) for\n"
    "                                 node.key_file and prints NAME's line for the other\n"
    "                                 nodes' cluster.keyring_file\n";

const char* const secret_usage =
    "  secret FILE                    a new cluster secret: writes FILE (readable by its owner\n"
    "                                 only) for every node's cluster.secret_file\n";

int secret_command(const config::command_line& cmd) {
  if (cmd.positional.size() != 2)
    throw usage_error("name the file to write");
  std::string error;
  if (!config::make_secret_file(cmd.positional[1], error)) {
    std::cerr << "riomesh secret: " << error << "\n";
    return 1;
  }
  std::cerr << "riomesh secret: wrote " << cmd.positional[1]
            << "; give every node of the cluster this file (cluster.secret_file)\n";
  return 0;
}

int keygen_command(const config::command_line& cmd) {
  if (cmd.positional.size() != 2)
    throw usage_error("name one node");
  const auto& name = cmd.positional[1];
  if (!config::is_node_name(name))
    throw usage_error("'" + config::printable(name) +
                      "' is not a valid node name: " + config::node_name_rule);
  auto path = cmd.has("--out") ? cmd.get("--out") : name + ".key";
  auto key = actors::node_key::generate();
  auto pem = config::private_key_pem(key.seed());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::cerr << "riomesh keygen: cannot create '" << path << "': " << std::strerror(errno)
              << (errno == EEXIST ? " (a key is never overwritten)" : "") << "\n";
    return 1;
  }
  bool ok = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    std::cerr << "riomesh keygen: cannot write '" << path << "': " << std::strerror(errno) << "\n";
    ::unlink(path.c_str());
    return 1;
  }
  std::string pub(key.public_part().begin(), key.public_part().end());
  std::cout << name << " " << config::public_key_text(pub) << "\n";
  std::cerr << "riomesh keygen: wrote " << path
            << "; give the line above to the other nodes (cluster.keyring_file or cluster.keys)\n";
  return 0;
}

}  // namespace riomesh::cli
