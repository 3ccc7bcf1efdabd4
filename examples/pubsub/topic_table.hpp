// The broker's tables: the subscribers of each topic, and the streams that
// ended (a publisher's last sample came), so that a subscriber back after
// a loss is told which streams it need not wait for. Subscribers, topics
// and publishers are the peers' to name, so each table has a bound from
// the node file: a join past one is refused with why, and the oldest ended
// stream is forgotten for a newer one. A stream is a publisher's run: a
// publisher started again under its name posts under a new run, which
// makes its stream live again (posted()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pubsub {

struct topic_limits {
  std::size_t topics = 1024;       // with at least one subscriber
  std::size_t subscribers = 1024;  // per topic
  std::size_t ended = 4096;        // streams remembered as ended, all topics
};

struct ended_stream {
  std::string topic, publisher;
  std::uint64_t run = 0;
  std::uint64_t total = 0;
};

// Member: what the broker keeps of a subscriber; `who` tells two apart.
template <class Member>
class topic_table {
 public:
  explicit topic_table(topic_limits l) : limits_(l) {}
  // Moved only: the index holds iterators into the list, which a move
  // keeps and a copy would not.
  topic_table(topic_table&&) = default;
  topic_table& operator=(topic_table&&) = default;
  topic_table(const topic_table&) = delete;
  topic_table& operator=(const topic_table&) = delete;

  enum class joined { added, known, no_topic_room, no_subscriber_room };

  joined join(const std::string& topic, Member m) {
    auto it = topics_.find(topic);
    if (it == topics_.end()) {
      if (topics_.size() >= limits_.topics)
        return joined::no_topic_room;
      if (limits_.subscribers == 0)
        return joined::no_subscriber_room;  // and no empty topic left behind
      it = topics_.emplace(topic, std::vector<Member>{}).first;
    }
    auto& members = it->second;
    for (const auto& x : members)
      if (x.who == m.who)
        return joined::known;
    if (members.size() >= limits_.subscribers)
      return joined::no_subscriber_room;
    members.push_back(std::move(m));
    return joined::added;
  }

  // Empty for a topic nobody subscribed to: a post to it makes no entry.
  std::vector<Member> members(const std::string& topic) const {
    auto it = topics_.find(topic);
    return it == topics_.end() ? std::vector<Member>{} : it->second;
  }
  std::size_t count(const std::string& topic) const {
    auto it = topics_.find(topic);
    return it == topics_.end() ? 0 : it->second.size();
  }
  std::size_t topics() const { return topics_.size(); }

  // Takes the members `is` picks out of every topic; gone(topic, member)
  // for each. A topic left with nobody goes, and its room with it.
  template <class Is, class Gone>
  void drop(Is&& is, Gone&& gone) {
    for (auto t = topics_.begin(); t != topics_.end();) {
      auto& members = t->second;
      for (auto it = members.begin(); it != members.end();)
        if (is(*it)) {
          gone(t->first, *it);
          it = members.erase(it);
        } else {
          ++it;
        }
      t = members.empty() ? topics_.erase(t) : std::next(t);
    }
  }

  // A publisher's run on `topic` ended after `total` samples: its
  // stream's entry, replacing one of an earlier run.
  void ended(const std::string& topic, const std::string& publisher, std::uint64_t run,
             std::uint64_t total) {
    forget({topic, publisher});
    if (limits_.ended == 0)
      return;
    if (ended_.size() >= limits_.ended)
      forget({ended_.front().topic, ended_.front().publisher});
    ended_.push_back({topic, publisher, run, total});
    index_.emplace(key{topic, publisher}, std::prev(ended_.end()));
  }
  // A post of `run`: if the stream ended in another run, it is live again.
  // Per post, so a lookup, and none while nothing ended.
  void posted(const std::string& topic, const std::string& publisher, std::uint64_t run) {
    if (index_.empty())
      return;
    auto it = index_.find(key{topic, publisher});
    if (it != index_.end() && it->second->run != run)
      forget(it);
  }
  std::vector<ended_stream> ended_on(const std::string& topic) const {
    std::vector<ended_stream> out;
    for (const auto& e : ended_)
      if (e.topic == topic)
        out.push_back(e);
    return out;
  }

  const topic_limits& limits() const { return limits_; }

 private:
  using key = std::pair<std::string, std::string>;  // topic, publisher
  using entries = std::list<ended_stream>;
  void forget(const key& k) {
    if (auto it = index_.find(k); it != index_.end())
      forget(it);
  }
  void forget(typename std::map<key, typename entries::iterator>::iterator it) {
    ended_.erase(it->second);
    index_.erase(it);
  }

  topic_limits limits_;
  std::map<std::string, std::vector<Member>> topics_;
  entries ended_;  // oldest first
  std::map<key, typename entries::iterator> index_;
};

}  // namespace pubsub
