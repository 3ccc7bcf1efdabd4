// The grants this node gave, and the judge of every use a holder claims:
// by the node it was given to, over the connection it was given on, with
// its rights, within its bytes, not revoked and not used up. Plain logic;
// the exchange calls it under its lock, from the I/O thread (uses) and the
// iomap manager (grants, revocations).
#pragma once

#include <riomesh/buffer.hpp>
#include <riomesh/grant.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

// Atomics act on one 8-byte word, aligned in memory, and need both rights.
enum class grant_op : std::uint8_t { write = 1, read = 2, fetch_add = 3, compare_swap = 4 };
constexpr bool is_atomic(grant_op op) {
  return op == grant_op::fetch_add || op == grant_op::compare_swap;
}

struct granted {
  std::string holder;
  std::uint64_t link = 0;  // the connection it lives on
  buffer region;
  std::optional<std::uint64_t> map;  // the holder's map of it (write rights, not once)
  std::uint8_t rights = 0;
  bool once = false;
};

struct grant_verdict {
  grant_status st = grant_status::ok;
  std::string why;  // for a refusal: what was wrong, for the holder's detail
  buffer slice;     // ok: the bytes used
  // A use-once grant's map, to take down now that it is used.
  std::optional<std::uint64_t> unmap;
};

// The holder's own check of a use before anything goes out (the owner
// checks again): its refusal, or nothing if the use may be tried.
std::optional<grant_verdict> check_claim(const grant& g, const std::string& me, grant_op op,
                                         std::uint64_t offset, std::uint64_t length);

class grant_table {
 public:
  // Its id; ids are never reused, so one no longer here was given once.
  std::uint64_t add(granted g);
  // `carried`: a write whose bytes came with the claim (the only writes a
  // use-once grant takes; it has no map for the holder).
  grant_verdict use(std::uint64_t id, const std::string& peer, std::uint64_t link, grant_op op,
                    std::uint64_t offset, std::uint64_t length, bool carried = false);
  // The grant, taken out; nothing if it is gone already.
  std::optional<granted> revoke(std::uint64_t id);
  // The grants living on a connection that ended.
  std::vector<granted> drop_link(std::uint64_t link);
  std::size_t size() const { return live_.size(); }

 private:
  std::map<std::uint64_t, granted> live_;
  std::uint64_t next_ = 1;
};

}  // namespace riomesh::actors
