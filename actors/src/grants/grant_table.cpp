#include <riomesh/actors/grants/grant_table.hpp>

#include <cstdint>
#include <limits>

namespace riomesh::actors {
namespace {

grant_verdict refusal(grant_status st, std::string why) {
  grant_verdict v;
  v.st = st;
  v.why = std::move(why);
  return v;
}

const char* doing(grant_op op) {
  switch (op) {
    case grant_op::write:
      return "writing";
    case grant_op::read:
      return "reading";
    default:
      return "atomics";
  }
}

grant_rights right_of(grant_op op) {
  if (is_atomic(op))
    return grant_rights::read_write;
  return op == grant_op::write ? grant_rights::write : grant_rights::read;
}

bool beyond(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
  return offset > size || length > size - offset;
}

std::string range_text(std::uint64_t id, std::uint64_t offset, std::uint64_t length,
                       std::uint64_t size) {
  return std::to_string(length) + " bytes at offset " + std::to_string(offset) + " of grant " +
         std::to_string(id) + ", which has " + std::to_string(size);
}

}  // namespace

std::optional<grant_verdict> check_claim(const grant& g, const std::string& me, grant_op op,
                                         std::uint64_t offset, std::uint64_t length) {
  auto id = std::to_string(g.id);
  if (g.holder != me)
    return refusal(grant_status::refused,
                   "grant " + id + " of node '" + g.owner + "' is not this node's to use");
  if (!g.allows(right_of(op)))
    return refusal(grant_status::refused,
                   "grant " + id + " of node '" + g.owner + "' does not allow " + doing(op));
  if (beyond(offset, length, g.length))
    return refusal(grant_status::out_of_range, range_text(g.id, offset, length, g.length));
  if (is_atomic(op) && length != 8)
    return refusal(grant_status::refused,
                   "an atomic acts on 8 bytes, not " + std::to_string(length));
  // Map 0 is no map: the connection's receive arena sits there, and a
  // grant's bytes never do. A use-once grant has none: its bytes go with
  // the claim.
  if (op == grant_op::write && !g.once &&
      (g.map == 0 || g.map > std::numeric_limits<std::uint64_t>::max() - g.length))
    return refusal(grant_status::refused,
                   "grant " + id + " of node '" + g.owner + "' has no map to write into");
  return std::nullopt;
}

std::uint64_t grant_table::add(granted g) {
  auto id = next_++;
  live_.emplace(id, std::move(g));
  return id;
}

grant_verdict grant_table::use(std::uint64_t id, const std::string& peer, std::uint64_t link,
                               grant_op op, std::uint64_t offset, std::uint64_t length,
                               bool carried) {
  auto refuse = refusal;
  auto it = live_.find(id);
  if (it == live_.end()) {
    if (id == 0 || id >= next_)
      return refuse(grant_status::refused, "grant " + std::to_string(id) + " was never given");
    return refuse(grant_status::revoked,
                  "grant " + std::to_string(id) + " was revoked, used up, or its connection ended");
  }
  auto& g = it->second;
  // Another node's grant is not this one's to use, whatever it claims;
  // one of an earlier connection of the same node ended with it.
  if (g.holder != peer)
    return refuse(grant_status::refused,
                  "grant " + std::to_string(id) + " was not given to node '" + peer + "'");
  if (g.link != link)
    return refuse(grant_status::revoked,
                  "grant " + std::to_string(id) + " was given on a connection that has ended");
  auto wanted = static_cast<std::uint8_t>(right_of(op));
  if ((g.rights & wanted) != wanted)
    return refuse(grant_status::refused,
                  "grant " + std::to_string(id) + " does not allow " + doing(op));
  if (beyond(offset, length, g.region.size()))
    return refuse(grant_status::out_of_range, range_text(id, offset, length, g.region.size()));
  if (op == grant_op::write && carried != g.once)
    return refuse(grant_status::refused,
                  g.once ? "grant " + std::to_string(id) +
                               " is used once: its write brings its bytes, which this node puts "
                               "in place"
                         : "grant " + std::to_string(id) +
                               " is mapped for writing: a write brings no bytes of its own");
  grant_verdict v;
  v.slice = g.region.slice(offset, length);
  // A word across two pieces of a gathered region is no word.
  if (is_atomic(op) && (length != 8 || v.slice.gathered() ||
                        reinterpret_cast<std::uintptr_t>(v.slice.data()) % 8 != 0))
    return refuse(grant_status::refused, "an atomic needs an 8-byte word aligned in memory; " +
                                             std::to_string(length) + " bytes at offset " +
                                             std::to_string(offset) + " of grant " +
                                             std::to_string(id) + " are not one");
  if (g.once) {
    v.unmap = g.map;
    live_.erase(it);
  }
  return v;
}

std::optional<granted> grant_table::revoke(std::uint64_t id) {
  auto it = live_.find(id);
  if (it == live_.end())
    return std::nullopt;
  auto g = std::move(it->second);
  live_.erase(it);
  return g;
}

std::vector<granted> grant_table::drop_link(std::uint64_t link) {
  std::vector<granted> out;
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second.link == link) {
      out.push_back(std::move(it->second));
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace riomesh::actors
