#include <riomesh/actor_registry.hpp>

#include <riomesh/config/diagnostic.hpp>
#include <riomesh/config/text.hpp>

#include <stdexcept>

namespace riomesh {

void actor_registry::add(const std::string& type, const std::string& summary, factory make) {
  if (!types_.emplace(type, entry{summary, std::move(make)}).second)
    throw std::logic_error("actor type '" + type + "' is registered twice");
}

void actor_registry::configure(runtime::configure_fn hook) {
  hooks_.push_back(std::move(hook));
}

runtime::configure_fn actor_registry::configurer() const {
  auto hooks = hooks_;
  return [hooks](caf::actor_system_config& cfg) {
    for (const auto& h : hooks)
      h(cfg);
  };
}

std::vector<std::pair<std::string, std::string>> actor_registry::types() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [type, e] : types_)
    out.emplace_back(type, e.summary);
  return out;
}

std::vector<std::pair<config::actor_spec, actor_registry::spawner>> actor_registry::prepare(
    const config::settings& s) const {
  std::vector<std::pair<config::actor_spec, spawner>> out;
  std::vector<config::diagnostic> problems;
  for (const auto& spec : s.actors) {
    auto it = types_.find(spec.type);
    if (it == types_.end()) {
      std::vector<std::string> known;
      std::string listed;
      for (const auto& t : types_) {
        known.push_back(t.first);
        listed += (listed.empty() ? "" : ", ") + t.first;
      }
      auto hint = config::closest(spec.type, known);
      problems.push_back(
          {spec.where,
           "actor '" + spec.name + "': unknown type '" + spec.type + "'" +
               (hint.empty() ? " (this program knows: " + (listed.empty() ? "none" : listed) + ")"
                             : "; did you mean '" + hint + "'?")});
      continue;
    }
    config::actor_params params{spec};
    auto make = it->second.make(params);
    auto found = params.finish();
    problems.insert(problems.end(), found.begin(), found.end());
    if (found.empty())
      out.emplace_back(spec, std::move(make));
  }
  if (!problems.empty())
    throw config::error(std::move(problems));
  return out;
}

}  // namespace riomesh
