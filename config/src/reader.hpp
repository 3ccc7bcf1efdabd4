// Collects the problems found while turning YAML nodes into settings, and
// remembers where each value came from so that later checks can point at it.
#pragma once

#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/text.hpp>

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
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
  // A value that could not be read: checks across settings leave it out
  // rather than report its default.
  void failed(const std::string& path) { failed_.insert(path); }
  bool is_failed(const std::string& path) const { return failed_.count(path) != 0; }

  // Where the value of `path` ("channel.sq_size") was set; the file start
  // when it was left at its default.
  origin where(const std::string& path) const {
    auto i = positions_.find(path);
    return i != positions_.end() ? i->second : origin{source_, 1, 1};
  }
  bool is_set(const std::string& path) const { return positions_.count(path) != 0; }
  void record(const std::string& path, const origin& where) { positions_[path] = where; }

  // Each peer entry whose name could be read, with its path
  // ("cluster.peers[2]"), whatever else it holds: a name listed twice is a
  // problem even beside a malformed address.
  std::vector<std::pair<std::string, std::string>>& peer_names() { return peer_names_; }

  const std::string& base_dir() const { return base_dir_; }
  const std::vector<diagnostic>& problems() const { return problems_; }

 private:
  std::string source_;
  std::string base_dir_;
  std::vector<diagnostic> problems_;
  std::map<std::string, origin> positions_;
  std::set<std::string> failed_;
  std::vector<std::pair<std::string, std::string>> peer_names_;  // name, path
};

// One value being read: the node, its dotted path and where it stands.
struct value_ref {
  YAML::Node node;  // a handle: cheap to copy, and iterator values are temporaries
  std::string path;
  origin where;
  reader& in;

  void fail(const std::string& message) const {
    in.failed(path);
    in.fail(where, path + ": " + message);
  }
  // The scalar text, or a recorded "expected ..." problem and false.
  bool scalar(std::string& out, const char* expected) const;
};

using config::closest;  // "did you mean" (text.hpp)

}  // namespace riomesh::config::detail
