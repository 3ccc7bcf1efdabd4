#include <riomesh/actors/reach/handle_scan.hpp>

#include <riomesh/channels/wire/byte_order.hpp>

#include <algorithm>
#include <cstring>

namespace riomesh::actors {
namespace {

constexpr std::size_t id_size = 8, atom_size = 8, node_size = 32;

bool overlaps(std::size_t from, std::size_t to,
              const std::vector<std::pair<std::size_t, std::size_t>>& opaque) {
  for (const auto& [b, e] : opaque)
    if (from < e && b < to)
      return true;
  return false;
}

}  // namespace

handle_scan::handle_scan(const std::vector<unsigned char>& node_id_bytes) {
  usable_ = node_id_bytes.size() == node_size;
  if (usable_)
    std::copy_n(node_id_bytes.begin(), atom_size, atom_.begin());
}

std::vector<handle_ref> handle_scan::scan(
    const unsigned char* body, std::size_t size,
    const std::vector<std::pair<std::size_t, std::size_t>>& opaque) const {
  std::vector<handle_ref> out;
  if (!usable_ || size < id_size + node_size)
    return out;
  // [from, to) holds no application bytes: a handle lies wholly in one such
  // gap. Searching the gaps only, an inline buffer's bytes (all of a 4 KiB
  // message's but a few) cost no search at all.
  auto search = [&](std::size_t from, std::size_t to) {
    const unsigned char* end = body + to;
    for (const unsigned char* at = body + from + id_size;
         end - at >= static_cast<long>(node_size);) {
      auto* hit = static_cast<const unsigned char*>(
          ::memmem(at, static_cast<std::size_t>(end - at), atom_.data(), atom_size));
      if (!hit || end - hit < static_cast<long>(node_size))
        break;
      std::size_t start = static_cast<std::size_t>(hit - body) - id_size;
      // The codec lists its ranges in order; should they ever not be, a
      // hit that reaches into one is still no handle.
      if (!overlaps(start, start + id_size + node_size, opaque)) {
        handle_ref h;
        h.actor = wire::load<std::uint64_t>(hit - id_size, wire::byte_order::big);
        h.node.first = wire::load<std::uint32_t>(hit + atom_size, wire::byte_order::big);
        std::copy_n(hit + atom_size + 4, 20, h.node.second.begin());
        if (h.actor != 0 && std::find(out.begin(), out.end(), h) == out.end())
          out.push_back(h);
      }
      at = hit + 1;
    }
  };
  std::size_t from = 0;
  for (const auto& [b, e] : opaque) {
    if (b > from)
      search(from, std::min(b, size));
    from = std::max(from, std::min(e, size));
  }
  if (from < size)
    search(from, size);
  return out;
}

}  // namespace riomesh::actors
