#include <riomesh/config/loader.hpp>

#include "actor_list.hpp"
#include "reader.hpp"
#include "schema.hpp"
#include "validate.hpp"

#include <riomesh/config/diagnostic.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <tuple>

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
    if (f.required && !seen.count(f.key)) {
      in.fail(where, sec.name + ": missing required key '" + f.key + "'");
      in.failed(sec.name + "." + f.key);
    }
}

void read_document(const YAML::Node& doc, reader& in, settings& out) {
  if (!doc.IsMap()) {
    for (const auto& s : detail::schema())  // nothing was read: no checks across keys
      for (const auto& f : s.fields)
        if (f.required)
          in.failed(s.name + "." + f.key);
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
      // A key at the top that belongs in a section: indented too little.
      std::string home;
      for (const auto& s : detail::schema())
        if (s.find(name))
          home = s.name;
      in.fail(at, home.empty()
                      ? unknown("section", name, section_names())
                      : "unknown section '" + name + "'; '" + name + "' is a key of section '" +
                            home + "': indent it under '" + home + ":'");
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
    if (!seen.count(s.name) && !required.empty()) {
      in.fail(in.at(YAML::Mark::null_mark()),
              "missing required section '" + s.name + "' (with " + required + ")");
      for (const auto& f : s.fields)
        if (f.required)
          in.failed(s.name + "." + f.key);
    }
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

// One `--setting section.key=value`, read as the file's value would be.
void apply_setting(const setting_override& s, reader& in, settings& out) {
  origin where{s.value.source, 0, 0};
  auto dot = s.path.find('.');
  std::vector<std::string> names;
  const detail::section* sec = nullptr;
  for (const auto& candidate : detail::schema()) {
    names.push_back(candidate.name);
    if (dot != std::string::npos && candidate.name == s.path.substr(0, dot))
      sec = &candidate;
  }
  if (!sec) {
    in.fail(where, s.path + ": " + unknown("section", s.path.substr(0, dot), names) +
                       " (an override is SECTION.KEY=VALUE)");
    return;
  }
  auto key = s.path.substr(dot + 1);
  const auto* f = sec->find(key);
  if (!f) {
    in.fail(where, s.path + ": " + unknown("key", key, sec->keys()));
    return;
  }
  if (s.path == "cluster.peers") {  // a list: the file's to give
    in.fail(where, s.path + ": the peers are the file's to list, not an override's");
    return;
  }
  YAML::Node node;
  try {
    node = YAML::Load(s.value.text);
  } catch (const YAML::ParserException& e) {
    in.fail(where, s.path + ": not a value: " + e.msg);
    return;
  }
  f->read(value_ref{node, s.path, where, in}, out);
  in.record(s.path, where);
}

void apply_overrides(const overrides& extra, reader& in, settings& out) {
  apply(extra.listen, "node.listen", in,
        [&](const value_ref& v) { return detail::read_endpoint(v, out.node.listen); });
  apply(extra.fabric, "node.fabric", in,
        [&](const value_ref& v) { return detail::read_fabric(v, out.node.fabric); });
  apply(extra.log_level, "logging.level", in,
        [&](const value_ref& v) { return detail::read_log_level(v, out.logging.level); });
  for (const auto& s : extra.settings)
    apply_setting(s, in, out);
}

// yaml-cpp's words for a line indented unlike its neighbours, with what
// usually causes them.
std::string syntax_hint(const std::string& message) {
  if (message.find("tab") != std::string::npos)
    return " (indent with spaces: YAML does not allow tabs there)";
  for (const char* m : {"end of map not found", "illegal map value", "end of sequence not found",
                        "bad indentation", "block sequence entries are not allowed"})
    if (message.find(m) != std::string::npos)
      return " (check the indentation of this line and the one before it: the keys of one "
             "mapping start in the same column, indented with spaces, never tabs)";
  return "";
}

// The file's problems by line and column, then those of the overrides.
std::vector<diagnostic> in_line_order(std::vector<diagnostic> problems, const std::string& file) {
  std::stable_sort(problems.begin(), problems.end(), [&](const diagnostic& a, const diagnostic& b) {
    auto key = [&](const diagnostic& d) {
      return std::make_tuple(d.where.source != file, d.where.line, d.where.column);
    };
    return key(a) < key(b);
  });
  return problems;
}

std::string folder_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

settings read_string(const std::string& yaml, const std::string& source,
                     const std::string& base_dir, const overrides& extra,
                     std::vector<diagnostic>& problems) {
  reader in{source, base_dir};
  settings out;
  bool parsed = true;
  try {
    read_document(YAML::Load(yaml), in, out);
  } catch (const YAML::ParserException& e) {
    in.fail(in.at(e.mark), "YAML syntax error: " + e.msg + syntax_hint(e.msg));
    parsed = false;
  }
  // Every problem at once: the overrides and the checks across settings run
  // on a file with problems too (checks leave out values that failed), but
  // not on one that could not be parsed: nothing of it was read.
  apply_overrides(extra, in, out);
  if (parsed)
    detail::validate(out, in);
  auto found = in_line_order(in.problems(), source);
  problems.insert(problems.end(), found.begin(), found.end());
  return out;
}

settings read_file(const std::string& path, const overrides& extra,
                   std::vector<diagnostic>& problems) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    problems.push_back(
        {origin{path, 0, 0}, std::string{"cannot read the config file: "} + std::strerror(errno)});
    return {};
  }
  std::string text{std::istreambuf_iterator<char>(file), {}};
  return read_string(text, path, folder_of(path), extra, problems);
}

settings load_string(const std::string& yaml, const std::string& source,
                     const std::string& base_dir, const overrides& extra) {
  std::vector<diagnostic> problems;
  auto s = read_string(yaml, source, base_dir, extra, problems);
  if (!problems.empty())
    throw error(std::move(problems));
  return s;
}

settings load_file(const std::string& path, const overrides& extra) {
  std::vector<diagnostic> problems;
  auto s = read_file(path, extra, problems);
  if (!problems.empty())
    throw error(std::move(problems));
  return s;
}

settings apply(const overrides& extra, settings s) {
  reader in{"", "."};
  apply_overrides(extra, in, s);
  if (!in.problems().empty())
    throw error(in.problems());
  return s;
}

}  // namespace riomesh::config
