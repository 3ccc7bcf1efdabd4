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

}  // namespace

bool value_ref::scalar(std::string& out, const char* expected) const {
  if (!node.IsScalar()) {
    fail(std::string{"expected "} + expected + ", found " + describe(node.Type()));
    return false;
  }
  out = node.Scalar();
  return true;
}

}  // namespace riomesh::config::detail
