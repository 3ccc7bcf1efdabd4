// Helpers for config tests: load YAML text and collect the rejection.
#pragma once

#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/loader.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

namespace riomesh::test {

// The problems a text is rejected with, each as "node.yaml:L:C: message".
inline std::vector<std::string> problems(const std::string& yaml,
                                         const config::overrides& extra = {},
                                         const std::string& base_dir = ".") {
  try {
    config::load_string(yaml, "node.yaml", base_dir, extra);
  } catch (const config::error& e) {
    std::vector<std::string> out;
    for (const auto& p : e.problems())
      out.push_back(p.to_string());
    return out;
  }
  return {};
}

// The one problem a text is rejected with.
inline std::string problem(const std::string& yaml, const config::overrides& extra = {},
                           const std::string& base_dir = ".") {
  auto all = problems(yaml, extra, base_dir);
  REQUIRE_MESSAGE(all.size() == 1, "expected one problem, got " << all.size());
  return all.front();
}

// A minimal valid node, for tests that add one section.
inline const std::string minimal = "node:\n  name: n1\n  listen: 127.0.0.1:7471\n";

inline std::string temp_file(const std::string& name, const std::string& contents) {
  std::string path = std::string{RIOMESH_BINARY_DIR} + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

}  // namespace riomesh::test
