// What every runtime publishes as "riomesh.admin", for the riomesh CLI (ping,
// stat) and for actors that report on their own node (runtime::admin()):
//   (ping_atom)   -> (node name)
//   (report_atom) -> stat_report
//   (list_atom)   -> published_list: what is published here, and its
//       connections as the actors they are
//   (dial_atom, host, port) -> (node name): connects to the node listening
//       there (runtime::connect, without blocking)
//   (resolve_atom, node, name, milliseconds) -> (strong_actor_ptr, interface)
//       an actor published on `node`, as runtime::remote_actor finds it, but
//       without blocking: for actors that look up their peers themselves
#pragma once

#include <riomesh/atoms.hpp>
#include <riomesh/stats.hpp>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

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

}  // namespace riomesh
