#include <riomesh/config/loader.hpp>

#include "actor_list.hpp"
#include "reader.hpp"
#include "schema.hpp"
#include "validate.hpp"

#include <riomesh/config/diagnostic.hpp>

#include <fstream>
#include <iterator>
#include <set>

namespace riomesh::config {
namespace {

using detail::reader;
using detail::value_ref;

std::vector<std::string> section_names() {
  std::vector<std::string> out;
  for (const auto& s : detail::schema())
    out.push_back(s.name);
  out.push_back("actors");
  return out;
}

std::string unknown(const std::string& what, const std::string& key,
                    const std::vector<std::string>& valid) {
  auto hint = detail::closest(key, valid);
  std::string text = "unknown " + what + " '" + key + "'";
  if (!hint.empty())
    return text + "; did you mean '" + hint + "'?";
  std::string listed;
  for (const auto& v : valid)
    listed += (listed.empty() ? "" : ", ") + v;
  return text + " (valid: " + listed + ")";
}

void read_section(const detail::section& sec, const YAML::Node& map, const origin& where,
                  reader& in, settings& out) {
  if (!map.IsMap() && !map.IsNull()) {
    in.fail(where, sec.name + ": expected a mapping of settings");
    return;
  }
  std::set<std::string> seen;
  if (map.IsMap()) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      auto key = it->first.Scalar();
      auto key_at = in.at(it->first.Mark());
      auto path = sec.name + "." + key;
      const auto* f = sec.find(key);
      if (!f) {
        in.fail(key_at, sec.name + ": " + unknown("key", key, sec.keys()));
        continue;
      }
      if (!seen.insert(key).second) {
        in.fail(key_at, path + ": set twice (first at " + in.where(path).to_string() + ")");
        continue;
      }
      // An empty value has no useful mark of its own: point at its key.
      auto value_at = it->second.IsNull() ? key_at : in.at(it->second.Mark());
      in.record(path, value_at);
      if (it->second.IsNull() && key != "peers") {
        in.fail(value_at, path + ": no value given");
        continue;
      }
      f->read(value_ref{it->second, path, value_at, in}, out);
    }
  }
  for (const auto& f : sec.fields)
    if (f.required && !seen.count(f.key))
      in.fail(where, sec.name + ": missing required key '" + f.key + "'");
}

void read_document(const YAML::Node& doc, reader& in, settings& out) {
  if (!doc.IsMap()) {
    in.fail(in.at(doc.Mark()), doc.IsNull() ? "the file is empty; a node needs at least "
                                              "node.name and node.listen"
                                            : "expected a mapping of sections (node, "
                                              "cluster, channel, runtime, logging, actors)");
    return;
  }
  std::set<std::string> seen;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    auto name = it->first.Scalar();
    auto at = in.at(it->first.Mark());
    if (name == "actors") {
      if (!seen.insert(name).second)
        in.fail(at, "actors: section appears twice");
      else
        detail::read_actor_list(
            value_ref{it->second, name, it->second.IsNull() ? at : in.at(it->second.Mark()), in},
            out);
      continue;
    }
    const detail::section* sec = nullptr;
    for (const auto& s : detail::schema())
      if (s.name == name)
        sec = &s;
    if (!sec) {
      in.fail(at, unknown("section", name, section_names()));
      continue;
    }
    if (!seen.insert(name).second) {
      in.fail(at, name + ": section appears twice");
      continue;
    }
    read_section(*sec, it->second, at, in, out);
  }
  for (const auto& s : detail::schema()) {
    std::string required;
    for (const auto& f : s.fields)
      if (f.required)
        required += (required.empty() ? "" : ", ") + f.key;
    if (!seen.count(s.name) && !required.empty())
      in.fail(in.at(YAML::Mark::null_mark()),
              "missing required section '" + s.name + "' (with " + required + ")");
  }
}

void apply(const std::optional<override_value>& value, const std::string& path, reader& in,
           const std::function<bool(const value_ref&)>& read) {
  if (!value)
    return;
  origin where{value->source, 0, 0};
  YAML::Node node(value->text);
  if (read(value_ref{node, path, where, in}))
    in.record(path, where);
}

void apply_overrides(const overrides& extra, reader& in, settings& out) {
  apply(extra.listen, "node.listen", in,
        [&](const value_ref& v) { return detail::read_endpoint(v, out.node.listen); });
  apply(extra.fabric, "node.fabric", in,
        [&](const value_ref& v) { return detail::read_fabric(v, out.node.fabric); });
  apply(extra.log_level, "logging.level", in,
        [&](const value_ref& v) { return detail::read_log_level(v, out.logging.level); });
}

std::string folder_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

settings load_string(const std::string& yaml, const std::string& source,
                     const std::string& base_dir, const overrides& extra) {
  reader in{source, base_dir};
  settings out;
  try {
    read_document(YAML::Load(yaml), in, out);
  } catch (const YAML::ParserException& e) {
    in.fail(in.at(e.mark), "YAML syntax error: " + e.msg);
  }
  // Overrides only ever replace values from a well-formed file; checking them
  // on a broken one would add noise to the real error.
  if (in.problems().empty()) {
    apply_overrides(extra, in, out);
    detail::validate(out, in);
  }
  if (!in.problems().empty())
    throw error(in.problems());
  return out;
}

settings load_file(const std::string& path, const overrides& extra) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw error({{origin{path, 0, 0}, "cannot open the config file"}});
  std::string text{std::istreambuf_iterator<char>(file), {}};
  return load_string(text, path, folder_of(path), extra);
}

}  // namespace riomesh::config
