#include <riomesh/config/print.hpp>

#include "actor_list.hpp"
#include "schema.hpp"

namespace riomesh::config {

std::string to_yaml(const settings& value) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& section : detail::schema()) {
    out << YAML::Key << section.name << YAML::Value << YAML::BeginMap;
    for (const auto& f : section.fields)
      out << YAML::Key << f.key << YAML::Value << f.show(value);
    out << YAML::EndMap;
  }
  if (!value.actors.empty())
    out << YAML::Key << "actors" << YAML::Value << detail::show_actor_list(value);
  out << YAML::EndMap;
  return std::string{out.c_str()} + "\n";
}

}  // namespace riomesh::config
