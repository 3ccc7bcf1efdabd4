// The exchange's state, shared by its files: tables and outbound
// (exchange.cpp), inbound (exchange_inbound.cpp), actor handles across
// nodes (exchange_handles.cpp), and the port the two sides of grants use
// (exchange_grants.cpp).
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/connection/connection_messages.hpp>
#include <riomesh/actors/exchange/exchange.hpp>
#include <riomesh/actors/grants/grant_holder.hpp>
#include <riomesh/actors/grants/grant_owner.hpp>
#include <riomesh/actors/io/io_executor.hpp>
#include <riomesh/actors/peers/handle_table.hpp>
#include <riomesh/actors/peers/held_inbound.hpp>
#include <riomesh/actors/peers/route_table.hpp>
#include <riomesh/actors/peers/route_waits.hpp>
#include <riomesh/actors/reach/export_registry.hpp>
#include <riomesh/actors/reach/handle_scan.hpp>
#include <riomesh/actors/requests/request_table.hpp>
#include <riomesh/errc.hpp>
#include <riomesh/message_codec.hpp>
#include <riomesh/message_signatures.hpp>
#include <riomesh/signature_prefixes.hpp>

#include <caf/actor.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <caf/send.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <atomic>
#include <vector>

namespace riomesh::actors {

// The sender of a request this node passes on for an actor of a third
// node: the peer answers it as it would any requester, and the answer
// finds its way back here by the request id.
constexpr std::uint64_t relay_sender = ~std::uint64_t{0};

struct exchange::impl final : grant_port {
  impl(caf::actor_system& s, exchange_params p)
      : sys(s),
        params(std::move(p)),
        handles(s, params.node_name, params.nodes, params.max_proxies_per_peer,
                [this](const std::string& peer, const caf::node_id& nid, caf::actor_id aid) {
                  return new_proxy(peer, nid, aid);
                }),
        awaiting_route(params.max_waiting),
        held(params.max_waiting),
        lent(*this, params.node_name),
        holding(*this, params.node_name) {}

  // ---- grant_port: what the grant sides need (exchange_grants.cpp) ----
  std::weak_ptr<grant_port> lifetime() const override { return shared_self; }
  std::shared_ptr<link> route_to(const std::string& peer) const override;
  link::submitted submit(link& l, outbound_message&& m) override {
    ++count.connection_enqueues;
    auto r = l.submit(std::move(m));
    if (r != link::submitted::queued)
      --count.connection_enqueues;
    return r;
  }
  void enqueue(const caf::strong_actor_ptr& to, const caf::strong_actor_ptr& from,
               caf::message msg) override {
    enqueue(to, from, caf::make_message_id(), std::move(msg));
  }
  void carry_then(link& l, grant_request& r, outbound_message& m, grant_wait& w) override;
  void deliver(link& l, inbound_message& m) override;
  void misbehaved(link& l, const std::string& what) override;

  // ---- helpers (the callers hold no lock) ----
  void undeliverable(const std::string& peer, std::uint64_t wait,
                     const caf::strong_actor_ptr& sender, caf::message_id mid,
                     const caf::strong_actor_ptr& proxy, caf::error why);
  void fail_request(const request_wait& w, caf::error why);
  caf::error not_connected(const std::string& peer) const;
  // Lets `peer` address `who` (and link to it: access::link), keeping it
  // alive while the peer is connected, and telling the peer of its exit.
  void export_to(const caf::strong_actor_ptr& who, const std::string& peer, access a);
  void hand_over(const std::string& peer, const encoded_message& enc);
  // Puts a local actor a peer knows by id into CAF's registry, until it exits.
  void keep_findable(const caf::strong_actor_ptr& who);
  void exported_exit(std::uint64_t id, const caf::error& reason);
  bool send_control(const std::string& peer, envelope&& e);
  caf::strong_actor_ptr proxy_for(link& l, std::uint64_t id) {  // the I/O thread's
    return handles.proxy_for(l.peer_name(), l.peer_node(), id);
  }
  // exchange_handles.cpp: actor handles across nodes
  caf::strong_actor_ptr new_proxy(const std::string& peer, const caf::node_id& nid,
                                  caf::actor_id aid);
  // False if its node id is another node's: the link must go.
  bool learn_peer(link& l);
  void watched(link& l, const envelope& in);
  void linked(link& l, const envelope& in, bool establish);
  void answer_node_query(link& l, const envelope& in);
  void node_info(link& l, const envelope& in);
  bool park(link& l, inbound_message& m, const std::vector<node_table::key>& unknown);
  void deliver_parked(link& l);
  void send_or_wait(const std::string& peer, outbound_message&& m);
  void route_ready(const std::string& peer, const std::shared_ptr<link>& l);
  void route_failed(const std::string& peer, const caf::error& why);
  // exchange_inbound.cpp
  void complete(link& l, inbound_message& m);
  void answer_resolve(link& l, const envelope& in);
  void introduced(link& l, const envelope& in);
  void refuse(link& l, const envelope& in, errc code, const std::string& why);

  caf::actor_system& sys;
  exchange_params params;
  node_events node;
  directory_events directory;
  // The I/O thread's execution unit: where deliveries it makes run.
  std::unique_ptr<io_executor> executor;
  io_loop* loop = nullptr;  // the thread `executor` runs on, for its counters
  // For callbacks that may outlive the exchange, and for proxies.
  std::weak_ptr<impl> shared_self;
  std::weak_ptr<exchange> owner;

  // Which link carries each peer; why its last ended; congestion.
  route_table<link> routes;

  // Which actor of which node a handle names: node ids, proxies
  // (handle_table.hpp). Its node table lists this node's own first.
  handle_table handles;
  // The I/O thread's: what decoding learned of message signatures.
  detail::message_signatures signatures{sys};
  // Every sender's: the signatures' bytes encoding writes.
  detail::signature_prefixes prefixes{sys};
  // Finds the actor handles in what this node sends (hand_over).
  handle_scan scanner{std::vector<unsigned char>{}};
  // Messages for nodes being dialed, until their link is up.
  route_waits<outbound_message> awaiting_route;
  // The I/O thread's own: links whose inbound waits for a node query, and
  // nodes a peer asked of did not know.
  held_inbound<inbound_message> held;

  // Grants this node gave (the owner), and its uses of others' (the holder).
  grant_owner lent;
  grant_holder holding;

  // Requests sent through proxies, until answered (its own lock).
  request_table requests;

  // What peers may reach here, and the guards of published actors that
  // answer members some messages only (its own lock).
  export_registry<caf::strong_actor_ptr, caf::weak_actor_ptr, member_guard> exports;

  struct atomic_counters {
    std::atomic<std::uint64_t> messages_out{0}, messages_in{0}, requests_out{0}, responses_in{0},
        bytes_placed_out{0}, bytes_placed_in{0}, payload_copied_out{0}, payload_copied_in{0},
        direct_writes{0}, undeliverable{0}, bad_inbound{0}, system_refused{0},
        links_refused{0};  // links from peers to actors never handed to them
    // Hand-offs, counted where they happen: into an actor's mailbox (a
    // delivery, a response, a failure notice, an event for the node or
    // the directory), and onto a link's outbox.
    std::atomic<std::uint64_t> mailbox_enqueues{0}, connection_enqueues{0};
  } count;

  // Every enqueue the exchange makes goes through here, to be counted.
  void enqueue(const caf::strong_actor_ptr& to, caf::strong_actor_ptr from, caf::message_id mid,
               caf::message msg) {
    ++count.mailbox_enqueues;
    // On the I/O thread, an idle target runs there (io_executor.hpp).
    auto* here = executor && executor->here() ? executor.get() : nullptr;
    to->enqueue(std::move(from), mid, std::move(msg), here);
  }
  // To the node's own actors: checked against what they take.
  template <class Handle, class... Ts>
  void tell(const Handle& to, Ts&&... xs) {
    if (!to)
      return;
    ++count.mailbox_enqueues;
    caf::anon_send(to, std::forward<Ts>(xs)...);
  }
};

}  // namespace riomesh::actors
