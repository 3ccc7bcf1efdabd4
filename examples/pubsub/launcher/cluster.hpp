// The nodes a launch runs: their files, read with riomesh's own loader (so a
// bad file stops the launch with its line), optionally moved to one address
// (--host) or to one network namespace each (--netns), then written to the
// run folder that the nodes are started from.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pubsub::launch {

struct node_plan {
  std::string name;
  std::string file;                                         // what the node is started with
  std::string netns;                                        // empty: the launcher's own namespace
  std::vector<std::pair<std::string, std::string>> actors;  // name, role
};

struct cluster_options {
  std::vector<std::string> files;
  std::string host;  // every node listens here, and finds its peers here
  // Node name -> its address, for a cluster spread over hosts: it listens
  // there and its peers find it there (before `host`).
  std::map<std::string, std::string> place;
  bool netns = false;
  std::string run_dir;
};

// One namespace per node and a hub namespace with a bridge joining them by
// veth pairs; removed again when this goes. Needs root and iproute2.
class netns_fabric {
 public:
  explicit netns_fabric(std::size_t nodes);
  ~netns_fabric();
  netns_fabric(const netns_fabric&) = delete;
  netns_fabric& operator=(const netns_fabric&) = delete;
  std::string name_of(std::size_t node) const;
  std::string address_of(std::size_t node) const;
  // tc netem SPEC (e.g. "delay 5ms 2ms loss 1%") on both ends of every
  // node's veth: a qdisc shapes only what leaves its device, so one end
  // alone would spare one direction. The kernel needs sch_netem. Returns
  // what the kernel reports for one of them; throws std::runtime_error
  // with the command that failed.
  std::string impair(const std::string& netem_spec);
  // Cuts `node` off from every other node, or joins it again: its port on
  // the bridge goes down, which drops everything both ways at once and
  // leaves --netem's qdiscs as they were. Its sockets stay open.
  void cut(std::size_t node, bool off);

 private:
  std::string prefix_;
  std::size_t nodes_;
};

// Throws riomesh::config::error for a bad file, std::runtime_error otherwise.
std::vector<node_plan> prepare(const cluster_options& options, const netns_fabric* fabric);

}  // namespace pubsub::launch
