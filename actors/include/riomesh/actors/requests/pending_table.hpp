// Who waits for an answer from which peer: requests sent through proxies,
// name lookups. Each wait gets a wire id, unique on this node, that the
// peer echoes back; an answer counts only from the peer it was sent to, so
// one peer cannot answer (or fail) another's requests. When a peer is lost,
// every wait on it is handed back at once to be failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace riomesh::actors {

template <class Waiter>
class pending_table {
 public:
  // Wire ids stay below 2^60: they ride in the request bits of a CAF
  // message id on the other side.
  static constexpr std::uint64_t max_id = (std::uint64_t{1} << 60) - 1;

  std::uint64_t add(const std::string& peer, Waiter w) {
    auto id = next_;
    next_ = next_ == max_id ? 1 : next_ + 1;
    waits_.emplace(id, entry{peer, std::move(w)});
    return id;
  }

  // The wait `id` on `peer`, removed; nothing if there is none (answered,
  // timed out, or never asked of that peer).
  std::optional<Waiter> take(const std::string& peer, std::uint64_t id) {
    auto it = waits_.find(id);
    if (it == waits_.end() || it->second.peer != peer)
      return std::nullopt;
    std::optional<Waiter> w{std::move(it->second.waiter)};
    waits_.erase(it);
    return w;
  }

  Waiter* find(std::uint64_t id) {
    auto it = waits_.find(id);
    return it == waits_.end() ? nullptr : &it->second.waiter;
  }
  const std::string* peer_of(std::uint64_t id) const {
    auto it = waits_.find(id);
    return it == waits_.end() ? nullptr : &it->second.peer;
  }

  std::vector<Waiter> take_all(const std::string& peer) {
    std::vector<Waiter> out;
    for (auto it = waits_.begin(); it != waits_.end();)
      if (it->second.peer == peer) {
        out.push_back(std::move(it->second.waiter));
        it = waits_.erase(it);
      } else {
        ++it;
      }
    return out;
  }
  std::vector<Waiter> take_all() {
    std::vector<Waiter> out;
    for (auto& [id, e] : waits_)
      out.push_back(std::move(e.waiter));
    waits_.clear();
    return out;
  }

  // f(id, waiter) for each wait on `peer`.
  template <class F>
  void for_each(const std::string& peer, F f) {
    for (auto& [id, e] : waits_)
      if (e.peer == peer)
        f(id, e.waiter);
  }

  std::size_t size() const { return waits_.size(); }

 private:
  struct entry {
    std::string peer;
    Waiter waiter;
  };
  std::uint64_t next_ = 1;
  std::unordered_map<std::uint64_t, entry> waits_;
};

}  // namespace riomesh::actors
