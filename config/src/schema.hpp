// The keys a node file may hold, section by section, with how each value is
// read and validated and how it is shown. Loader and printer both walk this
// one table, so a key cannot be readable but not printable, or vice versa.
#pragma once

#include "reader.hpp"

#include <riomesh/config/settings.hpp>

#include <functional>
#include <string>
#include <vector>

namespace riomesh::config::detail {

struct field {
  std::string key;
  bool required = false;
  std::function<void(const value_ref&, settings&)> read;
  std::function<YAML::Node(const settings&)> show;
};

struct section {
  std::string name;
  std::vector<field> fields;
  std::vector<std::string> keys() const;
  const field* find(const std::string& key) const;
};

const std::vector<section>& schema();

// Parsers shared with the overrides, which take the same values as the file.
bool read_endpoint(const value_ref& value, endpoint& out);
// 1-64 letters, digits, - _ . (node, peer and actor names).
bool read_name(const value_ref& value, std::string& out);
bool read_fabric(const value_ref& value, fabric_kind& out);
bool read_log_level(const value_ref& value, log_level& out);

}  // namespace riomesh::config::detail
