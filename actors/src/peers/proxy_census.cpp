#include <riomesh/actors/peers/proxy_census.hpp>

namespace riomesh::actors {

bool proxy_census::admit(const std::string& peer, const caf::node_id& nid) {
  std::lock_guard<std::mutex> guard(lock_);
  auto& p = peers_[peer];
  if (p.proxies >= max_)
    return false;
  ++p.proxies;
  p.nodes.insert(nid);
  return true;
}

void proxy_census::release(const std::string& peer) {
  std::lock_guard<std::mutex> guard(lock_);
  if (auto it = peers_.find(peer); it != peers_.end() && it->second.proxies > 0)
    --it->second.proxies;
}

std::set<caf::node_id> proxy_census::forget(const std::string& peer) {
  std::lock_guard<std::mutex> guard(lock_);
  std::set<caf::node_id> out;
  if (auto it = peers_.find(peer); it != peers_.end()) {
    out = std::move(it->second.nodes);
    peers_.erase(it);
  }
  return out;
}

std::vector<std::string> proxy_census::peers() const {
  std::lock_guard<std::mutex> guard(lock_);
  std::vector<std::string> out;
  for (const auto& [peer, p] : peers_)
    out.push_back(peer);
  return out;
}

std::size_t proxy_census::total() const {
  std::lock_guard<std::mutex> guard(lock_);
  std::size_t n = 0;
  for (const auto& [peer, p] : peers_)
    n += p.proxies;
  return n;
}

void proxy_census::clear() {
  std::lock_guard<std::mutex> guard(lock_);
  peers_.clear();
}

}  // namespace riomesh::actors
