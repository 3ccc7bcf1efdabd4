// Messages from a link held back until its peer has said who the nodes of
// the actor handles in them are (a node query): the first that named an
// unknown node, and everything the link brings after it but the answer,
// so that the order holds (a down behind a message must not overtake
// it). At most `max` wait per link: a peer that leaves its query
// unanswered while more come is cut off, not queued for. The I/O
// thread's alone.
#pragma once

#include <riomesh/actors/peers/node_query.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

namespace riomesh::actors {

template <class Message>
class held_inbound {
 public:
  explicit held_inbound(std::size_t max) : max_(max) {}

  // A query to send: its id, and the node ids it asks of the peer.
  struct query {
    std::uint64_t id = 0;
    std::vector<node_table::key> asked;
  };

  // `m` named nodes nobody told us of (`unknown`): it waits at the front
  // of the link's held messages (it is their oldest), and the query for
  // those nodes (at most max_node_query of them) replaces any before it.
  query hold(std::uint64_t link, Message&& m, std::vector<node_table::key> unknown) {
    auto& h = by_link_[link];
    h.waiting.push_front(std::move(m));
    h.query = next_query_++;
    h.asked = std::move(unknown);
    if (h.asked.size() > max_node_query)
      h.asked.resize(max_node_query);
    return {h.query, h.asked};
  }

  enum class behind { none, taken, full };
  // What the link brings while it has messages held waits behind them
  // (taken: `m` was moved from); `none`: nothing is held, `m` is the
  // caller's; `full`: `max` wait already, and `m` is left too.
  behind queue_behind(std::uint64_t link, Message& m) {
    auto it = by_link_.find(link);
    if (it == by_link_.end())
      return behind::none;
    if (it->second.waiting.size() >= max_)
      return behind::full;
    it->second.waiting.push_back(std::move(m));
    return behind::taken;
  }

  // The node ids asked by query `id` on `link`; null unless that is the
  // query the link waits on (an answer nobody asked for, or a late one).
  const std::vector<node_table::key>* asked(std::uint64_t link, std::uint64_t id) const {
    auto it = by_link_.find(link);
    return it == by_link_.end() || it->second.query != id ? nullptr : &it->second.asked;
  }

  // The answer came: the link's messages, oldest first, for delivery. One
  // of them may name unknown nodes again: hold() it, and the rest go
  // behind it (queue_behind, within no bound: they were taken already).
  std::deque<Message> release(std::uint64_t link) {
    auto it = by_link_.find(link);
    if (it == by_link_.end())
      return {};
    auto out = std::move(it->second.waiting);
    by_link_.erase(it);
    return out;
  }
  void put_back(std::uint64_t link, Message&& m) { by_link_[link].waiting.push_back(std::move(m)); }

  bool holds(std::uint64_t link) const { return by_link_.count(link) > 0; }
  std::size_t waiting(std::uint64_t link) const {
    auto it = by_link_.find(link);
    return it == by_link_.end() ? 0 : it->second.waiting.size();
  }
  // The link ended: what waited on it goes with it.
  void drop(std::uint64_t link) { by_link_.erase(link); }

 private:
  struct held {
    std::deque<Message> waiting;
    std::uint64_t query = 0;
    std::vector<node_table::key> asked;
  };
  std::size_t max_;
  std::map<std::uint64_t, held> by_link_;
  std::uint64_t next_query_ = 1;
};

}  // namespace riomesh::actors
