#include <riomesh/channels/engine/iomap_table.hpp>

#include <algorithm>
#include <limits>

namespace riomesh::engine {
namespace {

bool overlaps(const local_map& m, std::uint64_t offset, std::uint64_t length) {
  return offset < m.offset + m.length && m.offset < offset + length;
}

}  // namespace

iomap_table::added iomap_table::add(const region& r, bool remote_write,
                                    std::optional<std::uint64_t> offset) {
  local_map m{r.addr(), r.length, r.rkey, offset.value_or(r.addr()), -1};
  // The wire's entry length is 32 bits; rsockets truncates, we refuse.
  if (m.length == 0 || m.length > std::numeric_limits<std::uint32_t>::max() ||
      m.offset > std::numeric_limits<std::uint64_t>::max() - m.length)
    return {status::invalid};
  if (remote_write) {
    // The peer looks entries up by offset, first match: overlapping entries
    // would make its writes land in whichever came first.
    for (const auto& other : maps_)
      if (other.index >= 0 && overlaps(other, m.offset, m.length))
        return {status::invalid};
    auto free = std::find(used_.begin(), used_.end(), false);
    if (free == used_.end())
      return {status::no_space};
    *free = true;
    m.index = static_cast<int>(free - used_.begin());
    pending_.push_back({static_cast<std::uint32_t>(m.index),
                        {m.offset, {m.addr, m.rkey, static_cast<std::uint32_t>(m.length)}}});
  }
  maps_.push_back(m);
  return {status::ok, m.offset, m.index};
}

status iomap_table::remove(std::uint64_t addr, std::uint64_t length) {
  auto it = std::find_if(maps_.begin(), maps_.end(),
                         [&](const local_map& m) { return m.addr == addr && m.length == length; });
  if (it == maps_.end())
    return status::invalid;
  if (it->index >= 0) {
    auto index = static_cast<std::uint32_t>(it->index);
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const iomap_publication& p) { return p.index == index; }),
                   pending_.end());
    pending_.push_back({index, {}});
    used_[index] = false;
  }
  maps_.erase(it);
  return status::ok;
}

}  // namespace riomesh::engine
