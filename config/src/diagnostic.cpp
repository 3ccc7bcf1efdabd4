#include <riomesh/config/diagnostic.hpp>

namespace riomesh::config {
namespace {

std::string join(const std::vector<diagnostic>& problems) {
  std::string text;
  for (const auto& p : problems) {
    if (!text.empty())
      text += '\n';
    text += p.to_string();
  }
  return text;
}

}  // namespace

std::string origin::to_string() const {
  if (line <= 0)
    return source;
  return source + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string diagnostic::to_string() const {
  return where.to_string() + ": " + message;
}

error::error(std::vector<diagnostic> problems)
    : std::runtime_error(join(problems)), problems_(std::move(problems)) {}

}  // namespace riomesh::config
