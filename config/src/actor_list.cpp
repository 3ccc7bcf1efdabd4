// The `actors:` list of a node file. Only its shape is checked here: whether
// a type exists and what its parameters mean is up to the registry of the
// program that runs the node, which reports against the positions kept here.
#include "actor_list.hpp"

#include "schema.hpp"

#include <set>

namespace riomesh::config::detail {
namespace {

void read_params(const value_ref& v, actor_spec& spec) {
  if (v.node.IsNull())
    return;
  if (!v.node.IsMap())
    return v.fail("expected a mapping of parameter names to values");
  for (auto it = v.node.begin(); it != v.node.end(); ++it) {
    auto key = it->first.Scalar();
    auto key_at = v.in.at(it->first.Mark());
    value_ref item{it->second, v.path + "." + key,
                   it->second.IsNull() ? key_at : v.in.at(it->second.Mark()), v.in};
    bool twice = false;
    for (const auto& p : spec.params)
      twice = twice || p.key == key;
    if (twice) {
      v.in.fail(key_at, item.path + ": set twice");
      continue;
    }
    std::string text;
    if (!item.node.IsNull() && !item.scalar(text, "a single value"))
      continue;
    spec.params.push_back({key, text, item.where});
  }
}

void read_entry(const value_ref& v, std::set<std::string>& names, settings& s) {
  if (!v.node.IsMap())
    return v.fail("expected a mapping with type, name and optional params");
  actor_spec spec;
  spec.where = v.where;
  bool ok = true;
  for (auto it = v.node.begin(); it != v.node.end(); ++it) {
    auto key = it->first.Scalar();
    auto key_at = v.in.at(it->first.Mark());
    value_ref item{it->second, v.path + "." + key,
                   it->second.IsNull() ? key_at : v.in.at(it->second.Mark()), v.in};
    if (key == "type") {
      ok = item.scalar(spec.type, "an actor type name") && ok;
    } else if (key == "name") {
      if (!read_name(item, spec.name))
        ok = false;
      else if (!names.insert(spec.name).second)
        ok = false, item.fail("an actor named '" + spec.name + "' is listed twice");
    } else if (key == "params") {
      read_params(item, spec);
    } else {
      auto hint = closest(key, {"type", "name", "params"});
      ok = false;
      v.in.fail(key_at, v.path + ": unknown key '" + key + "'" +
                            (hint.empty() ? " (valid: type, name, params)"
                                          : "; did you mean '" + hint + "'?"));
    }
  }
  for (const char* required : {"type", "name"})
    if (!v.node[required])
      ok = false, v.fail(std::string{"missing required key '"} + required + "'");
  if (ok)
    s.actors.push_back(std::move(spec));
}

}  // namespace

void read_actor_list(const value_ref& v, settings& s) {
  if (v.node.IsNull())
    return;
  if (!v.node.IsSequence())
    return v.fail("expected a list of {type, name, params} entries");
  std::set<std::string> names;
  for (std::size_t i = 0; i < v.node.size(); ++i) {
    const YAML::Node& entry = v.node[i];
    read_entry(
        value_ref{entry, v.path + "[" + std::to_string(i) + "]", v.in.at(entry.Mark()), v.in},
        names, s);
  }
}

YAML::Node show_actor_list(const settings& s) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& a : s.actors) {
    YAML::Node entry;
    entry["type"] = a.type;
    entry["name"] = a.name;
    for (const auto& p : a.params)
      entry["params"][p.key] = p.value;
    list.push_back(entry);
  }
  return list;
}

}  // namespace riomesh::config::detail
