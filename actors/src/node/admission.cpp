#include <riomesh/actors/node/admission.hpp>

#include <algorithm>

namespace riomesh::actors {

std::size_t admission::from(const std::string& host) const {
  return static_cast<std::size_t>(std::count_if(
      by_id_.begin(), by_id_.end(), [&](const auto& e) { return e.second.host == host; }));
}

std::optional<std::uint64_t> admission::make_room(const std::string& host) const {
  bool host_full = from(host) >= std::max<std::size_t>(1, max_ / 2);
  if (!host_full && by_id_.size() < max_)
    return std::nullopt;
  std::optional<std::uint64_t> oldest;
  std::uint64_t oldest_order = 0;
  for (const auto& [id, e] : by_id_)
    if ((!host_full || e.host == host) && (!oldest || e.order < oldest_order)) {
      oldest = id;
      oldest_order = e.order;
    }
  return oldest;
}

void admission::accepted(std::uint64_t id, const std::string& host) {
  by_id_[id] = {host, next_++};
}

bool admission::left(std::uint64_t id) {
  return by_id_.erase(id) > 0;
}

}  // namespace riomesh::actors
