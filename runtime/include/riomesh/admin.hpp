// What every runtime publishes as "riomesh.admin" (admin_actor), for the
// riomesh CLI (ping, stat, ls) and for actors that report on their own node
// (runtime::admin()).
#pragma once

#include <riomesh/atoms.hpp>
#include <riomesh/stats.hpp>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace riomesh {

using ping_atom = caf::atom_constant<caf::atom("rm_ping")>;
using report_atom = caf::atom_constant<caf::atom("rm_report")>;
using list_atom = caf::atom_constant<caf::atom("rm_list")>;

constexpr const char* admin_name = "riomesh.admin";

// A node's counters, flattened so that they cross the wire and print as a
// table: "node.messages_out", "peer.<name>.queue_depth", ... and a few facts
// ("node", "listen", "fabric", "pid").
struct stat_report {
  std::vector<std::pair<std::string, std::string>> info;
  std::vector<std::pair<std::string, std::uint64_t>> counters;

  std::uint64_t value(const std::string& key) const {
    for (const auto& [k, v] : counters)
      if (k == key)
        return v;
    return 0;
  }
  // One connection counter summed over every peer: "peer.*.<counter>".
  std::uint64_t peer_sum(const std::string& counter) const {
    std::uint64_t total = 0;
    auto tail = "." + counter;
    for (const auto& [k, v] : counters)
      if (k.rfind("peer.", 0) == 0 && k.size() > tail.size() &&
          k.compare(k.size() - tail.size(), tail.size(), tail) == 0)
        total += v;
    return total;
  }
  std::string fact(const std::string& key) const {
    for (const auto& [k, v] : info)
      if (k == key)
        return v;
    return {};
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stat_report& x) {
  return f(caf::meta::type_name("riomesh::stat_report"), x.info, x.counters);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, connection_info& x) {
  return f(caf::meta::type_name("riomesh::connection_info"), x.actor, x.peer, x.remote, x.phase,
           x.dialed);
}

// The names published on a node, each with its interface: one message type
// per line, empty for an untyped actor; and the node's connections.
struct published_list {
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<connection_info> connections;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, published_list& x) {
  return f(caf::meta::type_name("riomesh::published_list"), x.names, x.connections);
}

// A member of the cluster may ask ping, report and list; dialing and
// resolving through the node are for its own process and for keys
// cluster.admins names (docs/security.md).
using admin_actor = caf::typed_actor<
    // The node's name.
    caf::replies_to<ping_atom>::with<std::string>, caf::replies_to<report_atom>::with<stat_report>,
    // What is published here, and its connections as the actors they are.
    caf::replies_to<list_atom>::with<published_list>,
    // Connects to the node listening there (runtime::connect, without
    // blocking): its name.
    caf::replies_to<dial_atom, std::string, std::uint16_t>::with<std::string>,
    // An actor published on `node` and its interface, as
    // runtime::remote_actor finds it, without blocking: for actors that
    // look up their peers themselves.
    caf::replies_to<resolve_atom, std::string, std::string,
                    std::chrono::milliseconds>::with<caf::strong_actor_ptr, std::string>>;

}  // namespace riomesh
