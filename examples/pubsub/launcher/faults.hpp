// Network faults on the links of --netns: what --netem and --partition ask
// for, checked before anything starts, and the partition's timing. The
// links themselves are netns_fabric's (cluster.hpp).
#pragma once

#include "cluster.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace pubsub::launch {

// A number of seconds >= 0, for messages like "--kill: 'x' is not ...".
// Throws std::invalid_argument naming `option` and `text`.
double parse_seconds(const std::string& option, const std::string& text);

// The spec of --netem ("delay 5ms 2ms loss 1%") as given. It reaches tc
// through a shell, so only characters of netem's grammar may appear.
// Throws std::invalid_argument naming the spec.
std::string checked_netem_spec(const std::string& spec);

struct partition_plan {
  std::string node;
  double at = 0;        // seconds after sending starts
  double duration = 0;  // seconds cut off
  std::string text;     // as given, for messages
};

// "NODE@SECONDS+DURATION"; throws std::invalid_argument naming the value.
partition_plan parse_partition(const std::string& text);

// Cuts one node off at its time and joins it again `duration` later.
class partition {
 public:
  // Throws std::invalid_argument if no node of `plans` has the plan's name.
  partition(partition_plan plan, const std::vector<node_plan>& plans, netns_fabric& fabric);
  // `since_sending`: seconds since the publisher's first ack, < 0 before.
  void tick(double since_sending, std::ostream& out);
  // Empty, or why the run did not see the whole fault (it ended first).
  std::string unfinished() const;

 private:
  using clock = std::chrono::steady_clock;
  partition_plan plan_;
  std::size_t index_ = 0;
  netns_fabric& fabric_;
  std::optional<clock::time_point> cut_since_;
  bool healed_ = false;
};

}  // namespace pubsub::launch
