// Which accepted connections still set up their session, and which one
// makes room for a newcomer: at most `max` in setup, and half of that from
// one address. A newcomer beyond either bound closes the oldest connection
// in setup of the address that holds the most (its own, when it is the one
// over its share), so a flood from any number of addresses closes its own
// connections: a peer that completes its handshake promptly from an
// address that is not flooding always gets in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace riomesh::actors {

class admission {
 public:
  explicit admission(std::size_t max) : max_(max) {}

  // The connection to close (if any) before `host`'s newcomer is let in.
  std::optional<std::uint64_t> make_room(const std::string& host) const;
  void accepted(std::uint64_t id, const std::string& host);
  // It left setup: up, evicted, or gone. False if it was not in setup.
  bool left(std::uint64_t id);

  std::size_t in_setup() const { return by_id_.size(); }
  std::size_t from(const std::string& host) const;
  std::size_t max() const { return max_; }

 private:
  struct entry {
    std::string host;
    std::uint64_t order = 0;
  };
  std::size_t max_;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, entry> by_id_;
  std::map<std::string, std::size_t> per_host_;
};

}  // namespace riomesh::actors
