// Collects the problems found while turning YAML nodes into settings, and
// remembers where each value came from so that later checks can point at it.
#pragma once

#include <riomesh/config/diagnostic.hpp>

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

namespace riomesh::config::detail {

class reader {
 public:
  reader(std::string source, std::string base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  origin at(const YAML::Mark& mark) const {
    if (mark.is_null())
      return origin{source_, 1, 1};
    return origin{source_, mark.line + 1, mark.column + 1};
  }

  void fail(const origin& where, std::string message) {
    problems_.push_back({where, std::move(message)});
  }

  // Where the value of `path` ("channel.sq_size") was set; the file start
  // when it was left at its default.
  origin where(const std::string& path) const {
    auto i = positions_.find(path);
    return i != positions_.end() ? i->second : origin{source_, 1, 1};
  }
  bool is_set(const std::string& path) const { return positions_.count(path) != 0; }
  void record(const std::string& path, const origin& where) { positions_[path] = where; }

  const std::string& base_dir() const { return base_dir_; }
  const std::vector<diagnostic>& problems() const { return problems_; }

 private:
  std::string source_;
  std::string base_dir_;
  std::vector<diagnostic> problems_;
  std::map<std::string, origin> positions_;
};

// One value being read: the node, its dotted path and where it stands.
struct value_ref {
  YAML::Node node;  // a handle: cheap to copy, and iterator values are temporaries
  std::string path;
  origin where;
  reader& in;

  void fail(const std::string& message) const { in.fail(where, path + ": " + message); }
  // The scalar text, or a recorded "expected ..." problem and false.
  bool scalar(std::string& out, const char* expected) const;
};

// "Did you mean" for unknown keys: the closest candidate, if close enough.
std::string closest(const std::string& key, const std::vector<std::string>& candidates);

}  // namespace riomesh::config::detail
