#include <riomesh/actors/node/admission.hpp>

#include <algorithm>

namespace riomesh::actors {

std::size_t admission::from(const std::string& host) const {
  auto it = per_host_.find(host);
  return it == per_host_.end() ? 0 : it->second;
}

std::optional<std::uint64_t> admission::make_room(const std::string& host) const {
  bool host_full = from(host) >= std::max<std::size_t>(1, max_ / 2);
  if (!host_full && by_id_.size() < max_)
    return std::nullopt;
  // The address that holds the most pays: the newcomer's own if it is past
  // its share, else whichever holds the most (the oldest address among equals
  // is as good as any).
  std::string victim_host = host;
  if (!host_full) {
    std::size_t most = 0;
    for (const auto& [h, n] : per_host_)
      if (n > most) {
        most = n;
        victim_host = h;
      }
  }
  std::optional<std::uint64_t> oldest;
  std::uint64_t oldest_order = 0;
  for (const auto& [id, e] : by_id_)
    if (e.host == victim_host && (!oldest || e.order < oldest_order)) {
      oldest = id;
      oldest_order = e.order;
    }
  return oldest;
}

void admission::accepted(std::uint64_t id, const std::string& host) {
  by_id_[id] = {host, next_++};
  ++per_host_[host];
}

bool admission::left(std::uint64_t id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end())
    return false;
  if (auto h = per_host_.find(it->second.host); h != per_host_.end() && --h->second == 0)
    per_host_.erase(h);
  by_id_.erase(it);
  return true;
}

}  // namespace riomesh::actors
