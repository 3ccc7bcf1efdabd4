#include <riomesh/config/actor_params.hpp>

#include "reader.hpp"

#include <riomesh/config/units.hpp>

#include <limits>

namespace riomesh::config {
namespace {

bool parse_whole(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19)
    return false;
  out = std::stoull(text);
  return true;
}

}  // namespace

const actor_param* actor_params::find(const std::string& key) {
  asked_.insert(key);
  for (const auto& p : spec_.params)
    if (p.key == key)
      return &p;
  return nullptr;
}

std::string actor_params::path(const std::string& key) const {
  return "actor '" + spec_.name + "' (" + spec_.type + "): params." + key;
}

void actor_params::fail(const std::string& key, const std::string& message) {
  origin where = spec_.where;
  for (const auto& p : spec_.params)
    if (p.key == key)
      where = p.where;
  problems_.push_back({where, path(key) + ": " + message});
}

std::string actor_params::text(const std::string& key, const std::string& fallback) {
  auto* p = find(key);
  return p ? p->value : fallback;
}

std::string actor_params::required_text(const std::string& key) {
  auto* p = find(key);
  if (!p || p->value.empty()) {
    problems_.push_back({spec_.where, path(key) + ": required, not given"});
    return {};
  }
  return p->value;
}

std::uint64_t actor_params::count(const std::string& key, std::uint64_t fallback, std::uint64_t lo,
                                  std::uint64_t hi) {
  auto* p = find(key);
  if (!p)
    return fallback;
  std::uint64_t n = 0;
  if (!parse_whole(p->value, n)) {
    fail(key, "expected a whole number, found '" + p->value + "'");
    return fallback;
  }
  if (n < lo || n > hi) {
    fail(key,
         p->value + " is out of range (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
    return fallback;
  }
  return n;
}

std::uint64_t actor_params::size(const std::string& key, std::uint64_t fallback, std::uint64_t lo,
                                 std::uint64_t hi) {
  auto* p = find(key);
  if (!p)
    return fallback;
  auto n = parse_size(p->value);
  if (!n) {
    fail(key, "'" + p->value + "' is not a size such as 64KiB");
    return fallback;
  }
  if (*n < lo || *n > hi) {
    fail(key, p->value + " is out of range (" + format_size(lo) + " .. " + format_size(hi) + ")");
    return fallback;
  }
  return *n;
}

duration actor_params::time(const std::string& key, duration fallback) {
  auto* p = find(key);
  if (!p)
    return fallback;
  auto d = parse_duration(p->value);
  if (!d) {
    fail(key, "'" + p->value + "' is not a duration such as 250ms");
    return fallback;
  }
  return *d;
}

bool actor_params::flag(const std::string& key, bool fallback) {
  auto* p = find(key);
  if (!p)
    return fallback;
  if (p->value == "true" || p->value == "yes")
    return true;
  if (p->value == "false" || p->value == "no")
    return false;
  fail(key, "expected true or false, found '" + p->value + "'");
  return fallback;
}

std::vector<diagnostic> actor_params::finish() {
  std::vector<std::string> known(asked_.begin(), asked_.end());
  for (const auto& p : spec_.params) {
    if (asked_.count(p.key))
      continue;
    auto hint = detail::closest(p.key, known);
    std::string listed;
    for (const auto& k : known)
      listed += (listed.empty() ? "" : ", ") + k;
    problems_.push_back(
        {p.where, path(p.key) + ": unknown parameter" +
                      (hint.empty() ? " (valid: " + (listed.empty() ? "none" : listed) + ")"
                                    : "; did you mean '" + hint + "'?")});
  }
  return std::move(problems_);
}

}  // namespace riomesh::config
