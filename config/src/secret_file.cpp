#include <riomesh/config/key_text.hpp>
#include <riomesh/config/secret_file.hpp>

#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

namespace riomesh::config {

bool make_secret_file(const std::string& path, std::string& error) {
  auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    auto dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      error = "cannot make the folder '" + dir + "': " + std::strerror(errno);
      return false;
    }
  }
  std::string raw(32, '\0');
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(raw.data(), static_cast<std::streamsize>(raw.size()))) {
    error = "no random bytes from /dev/urandom";
    return false;
  }
  auto text = encode_base64(raw) + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "cannot create '" + path + "': " + std::strerror(errno) +
            (errno == EEXIST ? " (a secret is never overwritten)" : "");
    return false;
  }
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    ::unlink(path.c_str());
  }
  return ok;
}

std::string secret_file_named_in(const std::string& node_file) {
  try {
    auto root = YAML::LoadFile(node_file);
    auto named = root["cluster"] ? root["cluster"]["secret_file"] : YAML::Node{};
    if (!named || !named.IsScalar() || named.Scalar().empty())
      return {};
    auto path = named.Scalar();
    if (path[0] == '/')
      return path;
    auto slash = node_file.rfind('/');
    return (slash == std::string::npos ? std::string{"."} : node_file.substr(0, slash)) + "/" +
           path;
  } catch (const YAML::Exception&) {
    return {};
  }
}

}  // namespace riomesh::config
