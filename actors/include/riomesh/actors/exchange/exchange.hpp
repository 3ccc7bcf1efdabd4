// Where actor messages meet the wire, without an actor in between: the
// node-wide tables (routes to peers, the local actors peers may address,
// the proxies of remote ones, the requests waiting for answers) and the two
// fast paths over them.
//   Outbound, on the sender's thread: a proxy's message is encoded and
//   submitted to the route's link (its outbox). One hand-off.
//   Inbound, on the I/O thread (as the links' link_events): an envelope is
//   decoded and enqueued straight into the target's mailbox, from the
//   sender's proxy, with a message id the response finds its way back by.
//   One hand-off.
// The slow path stays with actors: the node actor hears of links coming
// and going and sets the routes; the directory actor publishes, resolves
// names, and fails what waited on a lost peer. Thread-safe throughout.
#pragma once

#include <riomesh/actors/exchange/exchange_events.hpp>
#include <riomesh/actors/io/link.hpp>
#include <riomesh/config/settings.hpp>
#include <riomesh/stats.hpp>

#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::actors {

class grant_holder;
class grant_owner;
class io_loop;
class node_table;
struct io_executor_limits;

// What a published actor lets members send it: empty, or why not.
using member_guard = std::function<std::string(const caf::message&, bool admin)>;

struct exchange_params {
  std::string node_name;
  std::size_t eager_threshold = 16 * 1024;
  // A peer names the senders of its messages; each new one costs a proxy
  // here, held until it exits or the peer is lost. Beyond this many per
  // peer, a message from yet another sender is refused.
  std::size_t max_proxies_per_peer = 65536;
  // Messages held for a node being dialed (learned from a handle), at most.
  std::size_t max_waiting = 1024;
  // Where this node listens: told to peers, who may tell a third node.
  config::endpoint listen;
  // The node-wide table of nodes (null: one of its own).
  std::shared_ptr<node_table> nodes;
};

class exchange : public link_events, public std::enable_shared_from_this<exchange> {
 public:
  static std::shared_ptr<exchange> make(caf::actor_system& sys, exchange_params p);
  exchange(caf::actor_system& sys, exchange_params p);  // use make()
  ~exchange() override;

  // Who hears of links (the node actor) and of resolved names (the
  // directory). Set once at start.
  void set_node(node_events node);
  void set_directory(directory_events directory);
  // Lets `loop`'s thread run the actors its deliveries wake
  // (io_executor.hpp) instead of waking a CAF worker for each. Once, at
  // start; without it every delivery goes through the workers.
  void run_actors_on(io_loop& loop, const io_executor_limits& limits);

  // ---- routes (the node actor) ---------------------------------------------
  // The link kept to `peer`, or none (null).
  void route(const std::string& peer, std::shared_ptr<link> l);
  std::shared_ptr<link> route_to(const std::string& peer) const;

  // ---- outbound: any thread ------------------------------------------------
  // A proxy's message: encoded here and queued on the route. What cannot go
  // out is told to its sender (an error response, or (undelivered_atom,
  // node, error) for a one-way message), never dropped silently.
  void forward(const std::string& peer, std::uint64_t remote_id, const caf::strong_actor_ptr& proxy,
               caf::mailbox_element& what);
  // `linker` linked to (or unlinked from) the actor `remote_id` on `peer`,
  // through its proxy: the peer links its actor to a proxy of `linker`.
  void tell_link(const std::string& peer, std::uint64_t remote_id,
                 const caf::strong_actor_ptr& linker, bool establish);
  // A direct write into `peer`'s map at `offset`; `notify` hears of a failure.
  void place(const std::string& peer, std::uint64_t offset, buffer data,
             const caf::strong_actor_ptr& notify);
  // Asks `peer` for its actor published as `name`; the answer goes to the
  // directory as (resolved_atom, peer, id, actor id, interface). False if
  // there is no route.
  bool ask_name(const std::string& peer, std::uint64_t id, const std::string& name);

  // ---- remote memory grants ------------------------------------------------
  // The owner's side (grants/grant_owner.hpp): lends regions to peers (on
  // the link's I/O thread, the iomap manager's work) and takes them back.
  grant_owner& lent_grants();
  // The holder's side (grants/grant_holder.hpp): this node's uses of
  // peers' grants.
  grant_holder& held_grants();

  // ---- the tables (the directory actor, any thread) -------------------------
  bool publish(const std::string& name, const caf::strong_actor_ptr& who, std::string interface);
  // Members may send `who` only what `guard` lets through (its refusal,
  // empty if none; `admin`: the peer holds a key cluster.admins names).
  void guard(const caf::strong_actor_ptr& who, member_guard guard);
  bool unpublish(const std::string& name);
  // The actor published as `name` here: null if none.
  caf::strong_actor_ptr published(const std::string& name, std::string* interface) const;
  // Every name published here, with its interface (empty: untyped).
  std::vector<std::pair<std::string, std::string>> published_names() const;
  // The proxy of actor `id` on `peer`, made if there is none yet; null if
  // the peer already has max_proxies_per_peer of them.
  caf::strong_actor_ptr proxy_for(const std::string& peer, std::uint64_t id);
  // This node as handles name it, and where it listens (for the session
  // terms of its connections).
  node_identity identity() const;
  // The name of the node known to listen at `at` (its session terms said
  // so, or a peer did), if any.
  std::optional<std::string> node_at(const config::endpoint& at) const;
  // `peer` is gone (lost, stopped, or this node is stopping): what waits on
  // it fails with `why`, its proxies die with it, it knows no ids of ours.
  void lose_peer(const std::string& peer, const caf::error& why);
  // Every peer, for stopping.
  void lose_all(const caf::error& why);
  // `peer` will not be dialed (a node a peer named, refused or failed): what
  // waits for its route fails with `why`.
  void unreachable(const std::string& peer, const caf::error& why);
  // Whether a send to `peer` was refused as congested since it last drained.
  bool congested(const std::string& peer) const;
  void drained(const std::string& peer);
  node_counters counters() const;
  // Requests to peers' actors, from send to answer.
  latency_histogram request_latency() const;
  std::size_t proxies() const;
  // Lets every actor handle go (published actors, proxies, waiting
  // requesters, the node and the directory): the runtime is done.
  void clear();

  // ---- link_events: the I/O thread ----------------------------------------
  void established(link& l) override;
  void inbound(link& l, inbound_message& m) override;
  void writable(link& l) override;
  void closed(link& l, const std::string& reason, bool stopped) override;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
  std::set<std::uint64_t> learned_;  // links whose node is live in the table (I/O thread)
};

}  // namespace riomesh::actors
