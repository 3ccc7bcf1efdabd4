#include <riomesh/actors/exchange/node_table.hpp>

namespace riomesh::actors {

void node_table::learn(const std::string& name, const node_identity& id,
                       const config::endpoint& address) {
  std::lock_guard<std::mutex> guard(lock_);
  auto it = by_name_.find(name);
  if (it != by_name_.end())
    names_.erase(key_of(it->second.id));
  // A node id names one node: a name that took it over (it cannot, short of
  // a forged identity) loses nothing it did not have.
  if (auto old = names_.find(key_of(id)); old != names_.end() && old->second != name)
    by_name_.erase(old->second);
  by_name_[name] = node{name, id, address};
  names_[key_of(id)] = name;
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
