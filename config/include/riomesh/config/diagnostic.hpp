// Where a setting came from and what is wrong with it.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace riomesh::config {

// A place a value came from: a file position (1-based line and column), or a
// command-line option or environment variable (line 0).
struct origin {
  std::string source;  // file path, "--listen", "RIOMESH_FABRIC", ...
  int line = 0;
  int column = 0;
  std::string to_string() const;
};

struct diagnostic {
  origin where;
  std::string message;
  std::string to_string() const;  // "node.yaml:3:12: channel.sq_size: ..."
};

// Thrown when a configuration is rejected. It carries every problem found,
// not only the first, so a user fixes the file in one pass.
class error : public std::runtime_error {
 public:
  explicit error(std::vector<diagnostic> problems);
  const std::vector<diagnostic>& problems() const noexcept { return problems_; }

 private:
  std::vector<diagnostic> problems_;
};

}  // namespace riomesh::config
