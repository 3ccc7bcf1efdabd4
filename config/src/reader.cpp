#include "reader.hpp"

#include <algorithm>

namespace riomesh::config::detail {
namespace {

const char* describe(YAML::NodeType::value type) {
  switch (type) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "no value";
    default:
      return "a scalar";
  }
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

bool value_ref::scalar(std::string& out, const char* expected) const {
  if (!node.IsScalar()) {
    fail(std::string{"expected "} + expected + ", found " + describe(node.Type()));
    return false;
  }
  out = node.Scalar();
  return true;
}

std::string closest(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    auto d = edit_distance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace riomesh::config::detail
