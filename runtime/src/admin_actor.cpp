#include "admin_actor.hpp"

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/directory/directory.hpp>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message.hpp>
#include <caf/typed_response_promise.hpp>

#include <chrono>

namespace riomesh::detail {
namespace {

using clock = std::chrono::steady_clock;

void flatten(const node_counters& n, stat_report& r) {
  auto add = [&](const char* key, std::uint64_t v) { r.counters.emplace_back(key, v); };
  add("node.messages_out", n.messages_out);
  add("node.messages_in", n.messages_in);
  add("node.requests_out", n.requests_out);
  add("node.responses_in", n.responses_in);
  add("node.bytes_placed_out", n.bytes_placed_out);
  add("node.bytes_placed_in", n.bytes_placed_in);
  add("node.payload_copied_out", n.payload_copied_out);
  add("node.payload_copied_in", n.payload_copied_in);
  add("node.direct_writes", n.direct_writes);
  add("node.undeliverable", n.undeliverable);
  add("node.bad_inbound", n.bad_inbound);
  add("node.system_refused", n.system_refused);
  add("node.links_refused", n.links_refused);
  add("node.thens_carried", n.thens_carried);
  add("node.grants_fetched", n.grants_fetched);
  add("node.grants_served", n.grants_served);
  add("node.mailbox_enqueues", n.mailbox_enqueues);
  add("node.io_turns", n.io_turns);
  add("node.io_handed", n.io_handed);
  add("node.io_heavy", n.io_heavy);
  add("node.io_wakes", n.io_wakes);
  add("node.io_doorbells", n.io_doorbells);
  add("node.io_spins", n.io_spins);
  add("node.connection_enqueues", n.connection_enqueues);
  add("node.proxies", n.proxies);
  add("node.exported", n.exported);
  add("node.published", n.published);
}

void flatten(const memory_counters& m, stat_report& r) {
  auto add = [&](const char* key, std::uint64_t v) { r.counters.emplace_back(key, v); };
  add("memory.devices", m.devices);
  add("memory.registrations", m.registrations);
  add("memory.registered", m.registered);
  add("memory.pinned_bytes", m.pinned_bytes);
  add("memory.peak_pinned_bytes", m.peak_pinned_bytes);
  add("memory.refused", m.refused);
  add("memory.cache_hits", m.cache_hits);
  add("memory.cache_misses", m.cache_misses);
  add("memory.cache_evictions", m.cache_evictions);
  add("memory.cache_trimmed", m.cache_trimmed);
  add("memory.cache_entries", m.cache_entries);
  add("memory.cache_bytes", m.cache_bytes);
  add("memory.completion_queues", m.completion_queues);
  add("memory.cq_queue_pairs", m.cq_queue_pairs);
  add("memory.cq_polls", m.cq_polls);
  add("memory.cq_strays", m.cq_strays);
  add("memory.cq_kicks", m.cq_kicks);
}

void flatten(const std::string& peer, const connection_counters& c, stat_report& r) {
  auto add = [&](const char* key, std::uint64_t v) {
    r.counters.emplace_back("peer." + peer + "." + key, v);
  };
  add("messages_out", c.messages_out);
  add("messages_in", c.messages_in);
  add("bytes_placed_out", c.bytes_placed_out);
  add("bytes_placed_in", c.bytes_placed_in);
  add("inline_bytes_out", c.inline_bytes_out);
  add("inline_bytes_in", c.inline_bytes_in);
  add("streamed_bytes_in", c.streamed_bytes_in);
  add("staged_bytes_in", c.staged_bytes_in);
  add("staged_bytes_out", c.staged_bytes_out);
  add("direct_bytes_out", c.direct_bytes_out);
  add("credit_stalls", c.credit_stalls);
  add("queue_depth", c.queue_depth);
  add("exposed_maps", c.exposed_maps);
  add("exposed_bytes", c.exposed_bytes);
  add("dropped", c.dropped);
  add("arena_in_use", c.arena_in_use);
  add("arena_size", c.arena_size);
  add("peer_arena_free", c.peer_arena_free);
  add("registrations", c.registrations);
  add("registration_hits", c.registration_hits);
  add("per_write_registrations", c.per_write_registrations);
  add("encrypted", c.encrypted);
  add("authenticated", c.authenticated);
}

// A function actor with arguments: CAF 0.17 binds a null reference for a
// captureless spawn of a lambda without them (caf-0.17.md).
caf::behavior admin(caf::event_based_actor* self, actors::directory_actor directory,
                    std::vector<std::pair<std::string, std::string>> facts,
                    std::function<published_list()> published) {
  auto started = clock::now();
  return {
      [=](ping_atom) { return facts.front().second; },
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
                  flatten(s.node, r);
                  flatten(s.memory, r);
                  for (const auto& [peer, c] : s.peers)
                    flatten(peer, c, r);
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

caf::actor spawn_admin(caf::actor_system& sys, actors::directory_actor directory,
                       std::vector<std::pair<std::string, std::string>> facts,
                       std::function<published_list()> published) {
  return sys.spawn(admin, std::move(directory), std::move(facts), std::move(published));
}

}  // namespace riomesh::detail
