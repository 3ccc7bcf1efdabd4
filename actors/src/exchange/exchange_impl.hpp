// The exchange's state, shared by its files: tables and outbound
// (exchange.cpp), inbound (exchange_inbound.cpp).
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/directory/directory.hpp>
#include <riomesh/actors/directory/export_table.hpp>
#include <riomesh/actors/directory/pending_table.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/io/io_executor.hpp>
#include <riomesh/errc.hpp>

#include <caf/actor.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/message_id.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>

namespace riomesh::actors {

// A request sent through a proxy, until its response (or error) comes.
struct request_wait {
  caf::strong_actor_ptr requester;
  caf::message_id mid;
  caf::strong_actor_ptr proxy;
};

struct exchange::impl {
  impl(caf::actor_system& s, exchange_params p) : sys(s), params(std::move(p)) {}

  // ---- helpers (the callers hold no lock) ----
  void undeliverable(const std::string& peer, std::uint64_t wait,
                     const caf::strong_actor_ptr& sender, caf::message_id mid,
                     const caf::strong_actor_ptr& proxy, caf::error why);
  void fail_request(const request_wait& w, caf::error why);
  caf::error not_connected(const std::string& peer) const;
  void export_sender(const caf::strong_actor_ptr& who, const std::string& peer);
  void exported_exit(std::uint64_t id, const caf::error& reason);
  bool send_control(const std::string& peer, envelope&& e);
  caf::strong_actor_ptr proxy_for(const std::string& peer, std::uint64_t id);
  void kill_proxy(const std::string& peer, std::uint64_t id, const caf::error& why);
  // exchange_inbound.cpp
  void deliver(link& l, inbound_message& m);
  void complete(link& l, inbound_message& m);
  void answer_resolve(link& l, const envelope& in);
  void refuse(link& l, const envelope& in, errc code, const std::string& why);

  caf::actor_system& sys;
  exchange_params params;
  caf::actor node, directory;
  // The I/O thread's execution unit: where deliveries it makes run.
  std::unique_ptr<io_executor> executor;
  // For callbacks that may outlive the exchange, and for proxies.
  std::weak_ptr<impl> shared_self;
  std::weak_ptr<exchange> owner;

  mutable std::mutex routes_lock;
  std::map<std::string, std::shared_ptr<link>> routes;

  mutable std::mutex tables_lock;
  export_table<caf::strong_actor_ptr, caf::weak_actor_ptr> exports;
  // Held strongly, so a remote actor keeps one identity here (one proxy,
  // one address) until it exits or its node is lost.
  std::map<std::pair<std::string, std::uint64_t>, caf::strong_actor_ptr> proxies;
  std::map<std::string, std::size_t> proxies_of;  // per peer, for the bound
  pending_table<request_wait> requests;
  std::set<std::string> congested_peers;
  std::map<std::string, std::string> last_failure;  // why a peer's link ended

  struct atomic_counters {
    std::atomic<std::uint64_t> messages_out{0}, messages_in{0}, requests_out{0}, responses_in{0},
        bytes_placed_out{0}, bytes_placed_in{0}, payload_copied_out{0}, payload_copied_in{0},
        direct_writes{0}, undeliverable{0}, bad_inbound{0}, system_refused{0};
    // Hand-offs, counted where they happen: into an actor's mailbox (a
    // delivery, a response, a failure notice, an event for the node or
    // the directory), and onto a link's outbox.
    std::atomic<std::uint64_t> mailbox_enqueues{0}, outbox_pushes{0};
  } count;

  // Every enqueue the exchange makes goes through here, to be counted.
  void enqueue(const caf::strong_actor_ptr& to, caf::strong_actor_ptr from, caf::message_id mid,
               caf::message msg) {
    ++count.mailbox_enqueues;
    // On the I/O thread, an idle target runs there (io_executor.hpp).
    auto* here = executor && executor->here() ? executor.get() : nullptr;
    to->enqueue(std::move(from), mid, std::move(msg), here);
  }
  template <class... Ts>
  void tell(const caf::actor& to, Ts&&... xs) {
    if (!to)
      return;
    ++count.mailbox_enqueues;
    to->enqueue(nullptr, caf::make_message_id(), caf::make_message(std::forward<Ts>(xs)...),
                nullptr);
  }
  // ... and every push onto a link.
  link::submitted submit(link& l, outbound_message&& m) {
    auto r = l.submit(std::move(m));
    if (r == link::submitted::queued)
      ++count.outbox_pushes;
    return r;
  }
};

}  // namespace riomesh::actors
