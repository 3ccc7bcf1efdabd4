// What the launcher learns from the nodes' report lines (report.hpp):
// progress while the cluster runs, then one table and a verdict.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace pubsub::launch {

struct event {
  std::string role, actor, kind;
  std::map<std::string, std::string> values;
  std::string get(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? std::string{} : it->second;
  }
};

// "pubsub subscriber sub-1: summary messages=10 ..." or nothing.
std::optional<event> parse_event(const std::string& line);

struct actor_entry {
  std::string name, role, node;               // role: broker, publisher or subscriber
  std::optional<event> last_progress, final;  // final: a subscriber's summary, a publisher's done
  std::vector<std::string> notes;             // broker_lost, gap, ... as they came
  std::vector<std::string> seen;              // every event kind until stopping, restarts included
};

class scoreboard {
 public:
  void expect(const std::string& actor, const std::string& role, const std::string& node);
  void add(const event& e);
  // A restarted node's actors start over.
  void restarted(const std::string& node);
  // From here on the launcher stops every node at once, so an actor may see
  // its peers go (broker_lost, subscriber_left): such events are shown but
  // no longer count for or against an expectation.
  void stopping() { stopping_ = true; }
  bool finished() const;  // every publisher done, every subscriber summarized
  // A publisher said it started sending: the clock of --kill and --cut. Its
  // progress lines come once per report interval, too late for a short run.
  bool sending() const;
  std::string progress(double seconds) const;
  void print_table(std::ostream& out) const;
  // Empty when every subscriber got everything intact, each expected
  // "actor:event" (comma separated) was reported and no "actor:!event" was;
  // else what was wrong. With `gaps_after_loss`, a subscriber that
  // reported its broker lost may have gaps (what was in flight on the lost
  // session is not sent again), never a bad sample.
  std::vector<std::string> problems(const std::string& expected = {},
                                    bool gaps_after_loss = false) const;

 private:
  std::vector<actor_entry> actors_;
  bool stopping_ = false;
};

}  // namespace pubsub::launch
