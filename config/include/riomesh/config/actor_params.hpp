// The parameters of one `actors:` entry, as its type's factory reads them.
// A getter that meets a bad value records a problem at the value's position
// in the file and returns the fallback, so that every problem of a file is
// reported in one pass; finish() adds the parameters nobody asked for.
#pragma once

#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/settings.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace riomesh::config {

class actor_params {
 public:
  explicit actor_params(const actor_spec& spec) : spec_(spec) {}

  const std::string& name() const { return spec_.name; }
  const std::string& type() const { return spec_.type; }

  std::string text(const std::string& key, const std::string& fallback);
  std::string required_text(const std::string& key);
  std::uint64_t count(const std::string& key, std::uint64_t fallback, std::uint64_t lo,
                      std::uint64_t hi);
  std::uint64_t size(const std::string& key, std::uint64_t fallback, std::uint64_t lo,
                     std::uint64_t hi);
  duration time(const std::string& key, duration fallback);
  bool flag(const std::string& key, bool fallback);

  // A problem the factory found itself, e.g. two parameters that disagree.
  void fail(const std::string& key, const std::string& message);
  // Everything found wrong, unknown parameters included (with a "did you
  // mean" when one is close). Call once, after the last getter.
  std::vector<diagnostic> finish();

 private:
  const actor_param* find(const std::string& key);
  std::string path(const std::string& key) const;

  const actor_spec& spec_;
  std::set<std::string> asked_;
  std::vector<diagnostic> problems_;
};

}  // namespace riomesh::config
