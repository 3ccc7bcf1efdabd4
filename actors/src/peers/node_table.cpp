#include <riomesh/actors/peers/node_table.hpp>

namespace riomesh::actors {

bool node_table::learn(const std::string& name, const node_identity& id,
                       const config::endpoint& address) {
  std::lock_guard<std::mutex> guard(lock_);
  if (auto holder = holder_locked(key_of(id)); holder && *holder != name)
    return false;
  auto it = by_name_.find(name);
  if (it != by_name_.end() && key_of(it->second.id) != key_of(id)) {
    // Its earlier run's id stays its own: nobody else may claim it.
    names_.erase(key_of(it->second.id));
    retired_.emplace_back(key_of(it->second.id), name);
    if (retired_.size() > max_retired)
      retired_.pop_front();
  }
  by_name_[name] = node{name, id, address};
  names_[key_of(id)] = name;
  learned_at_[name] = ++clock_;
  make_room();
  return true;
}

void node_table::make_room() {
  while (by_name_.size() > max_) {
    const std::string* oldest = nullptr;
    std::uint64_t when = 0;
    for (const auto& [name, at] : learned_at_)
      if (!pinned_.count(name) && !live_.count(name) && (!oldest || at < when)) {
        oldest = &name;
        when = at;
      }
    if (!oldest)
      return;  // everything is pinned or live: the sessions' own bound holds
    auto name = *oldest;
    names_.erase(key_of(by_name_.at(name).id));
    by_name_.erase(name);
    learned_at_.erase(name);
  }
}

void node_table::pin(const std::string& name) {
  std::lock_guard<std::mutex> guard(lock_);
  pinned_.insert(name);
}

void node_table::live(const std::string& name, bool up) {
  std::lock_guard<std::mutex> guard(lock_);
  if (up) {
    ++live_[name];
  } else if (auto it = live_.find(name); it != live_.end() && --it->second == 0) {
    live_.erase(it);
  }
}

std::optional<node_table::node> node_table::by_name(const std::string& name) const {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = by_name_.find(name);
  if (it == by_name_.end())
    return std::nullopt;
  return it->second;
}

std::optional<node_table::node> node_table::by_id(const key& k) const {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = names_.find(k);
  if (it == names_.end())
    return std::nullopt;
  return by_name_.at(it->second);
}

std::optional<std::string> node_table::holder_of(const key& k) const {
  std::lock_guard<std::mutex> guard(lock_);
  return holder_locked(k);
}

std::optional<std::string> node_table::holder_locked(const key& k) const {
  if (auto it = names_.find(k); it != names_.end())
    return it->second;
  for (const auto& [old, name] : retired_)
    if (old == k)
      return name;
  return std::nullopt;
}

std::optional<node_table::node> node_table::by_address(const config::endpoint& at) const {
  std::lock_guard<std::mutex> guard(lock_);
  for (const auto& [name, n] : by_name_)
    if (n.address.port == at.port && n.address.host == at.host)
      return n;
  return std::nullopt;
}

std::size_t node_table::size() const {
  std::lock_guard<std::mutex> guard(lock_);
  return by_name_.size();
}

config::endpoint listen_address(const node_identity& id, const std::string& seen) {
  config::endpoint out;
  out.port = id.listen_port;
  if (!id.listen_host.empty() && id.listen_host != "0.0.0.0" && id.listen_host != "::") {
    out.host = id.listen_host;
    return out;
  }
  // "host:port" or "[v6]:port"
  auto colon = seen.rfind(':');
  auto host = seen.substr(0, colon == std::string::npos ? seen.size() : colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  out.host = host;
  return out;
}

}  // namespace riomesh::actors
