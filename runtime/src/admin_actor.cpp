#include "admin_actor.hpp"
#include "metrics/counter_catalog.hpp"

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/directory/directory.hpp>

#include <caf/actor_system.hpp>
#include <caf/message.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <chrono>

namespace riomesh::detail {
namespace {

using clock = std::chrono::steady_clock;

template <class Counters>
void flatten(const std::string& prefix, const std::vector<metric<Counters>>& catalog,
             const Counters& c, stat_report& r) {
  for (const auto& m : catalog)
    r.counters.emplace_back(prefix + m.key, c.*m.field);
}

// A function actor with arguments: CAF 0.17 binds a null reference for a
// captureless spawn of a lambda without them (caf-0.17.md).
admin_actor::behavior_type admin(admin_actor::pointer self, actors::directory_actor directory,
                                 std::vector<std::pair<std::string, std::string>> facts,
                                 std::function<published_list()> published) {
  auto started = clock::now();
  return {
      [=](ping_atom) -> caf::result<std::string> { return facts.front().second; },
      [=](list_atom) -> caf::result<published_list> {
        auto rp = self->make_response_promise<published_list>();
        auto list = published();
        self->request(directory, std::chrono::seconds(10), actors::stats_atom::value)
            .then(
                [=](actors::node_stats& s) mutable {
                  list.connections = std::move(s.connections);
                  // Members may list (admin_refusal): they learn which
                  // peers are connected, as stat shows, not where they are.
                  for (auto& c : list.connections)
                    c.remote.clear();
                  rp.deliver(std::move(list));
                },
                [=](caf::error&) mutable { rp.deliver(std::move(list)); });
        return rp;
      },
      [=](dial_atom, const std::string& host, std::uint16_t port) -> caf::result<std::string> {
        self->delegate(directory, dial_atom::value, host, port);
        return caf::delegated<std::string>{};
      },
      [=](resolve_atom, const std::string& node, const std::string& name,
          std::chrono::milliseconds timeout) -> caf::result<caf::strong_actor_ptr, std::string> {
        self->delegate(directory, resolve_atom::value, node, name, timeout);
        return caf::delegated<caf::strong_actor_ptr, std::string>{};
      },
      [=](report_atom) -> caf::result<stat_report> {
        auto rp = self->make_response_promise<stat_report>();
        self->request(directory, std::chrono::seconds(10), actors::stats_atom::value)
            .then(
                [=](const actors::node_stats& s) mutable {
                  stat_report r;
                  r.info = facts;
                  r.counters.emplace_back(
                      "node.uptime_ms",
                      std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started)
                          .count());
                  flatten("node.", node_metrics(), s.node, r);
                  flatten("memory.", memory_metrics(), s.memory, r);
                  for (const auto& [peer, c] : s.peers)
                    flatten("peer." + peer + ".", connection_metrics(), c, r);
                  rp.deliver(std::move(r));
                },
                [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
        return rp;
      },
  };
}

}  // namespace

std::string admin_refusal(const caf::message& msg, bool admin) {
  if (admin)
    return {};
  if (msg.size() >= 1 && msg.match_element<caf::atom_value>(0)) {
    auto what = msg.get_as<caf::atom_value>(0);
    if (what == ping_atom::value || what == report_atom::value || what == list_atom::value)
      return {};
  }
  return std::string{admin_name} +
         " answers members ping, stat and list only; dialing, resolving and other control "
         "are for the node's own process and for keys cluster.admins names";
}

admin_actor spawn_admin(caf::actor_system& sys, actors::directory_actor directory,
                        std::vector<std::pair<std::string, std::string>> facts,
                        std::function<published_list()> published) {
  return sys.spawn(admin, std::move(directory), std::move(facts), std::move(published));
}

}  // namespace riomesh::detail
