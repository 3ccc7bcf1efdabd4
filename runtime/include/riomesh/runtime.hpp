// The embedding API: one riomesh node inside a user's program. It starts
// CAF's actor system, the progress thread, the listener and the
// connections to the configured peers; actors on other nodes are reached
// through proxies used like local handles:
//
//   riomesh::runtime rt{settings, [](caf::actor_system_config& cfg) {
//     cfg.add_message_type<my_msg>("my_msg");   // what crosses the wire
//   }};
//   rt.publish(worker, "worker");
//   auto w = rt.remote_actor<worker_actor>("node-b", "worker");  // expected<Handle>
//   self->request(*w, 1s, job{rt.allocate(64 << 20)})...
//
// Errors are of the category riomesh (riomesh/errc.hpp). A one-way message
// that cannot go out comes back to its sender as
// (riomesh::undelivered_atom, node, error); notify_writable() asks for
// (riomesh::writable_atom, node) when a congested peer drains.
#pragma once

#include <riomesh/admin.hpp>
#include <riomesh/atoms.hpp>
#include <riomesh/buffer.hpp>
#include <riomesh/config/overrides.hpp>
#include <riomesh/config/settings.hpp>
#include <riomesh/errc.hpp>
#include <riomesh/grant.hpp>
#include <riomesh/iomap.hpp>
#include <riomesh/stats.hpp>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>
#include <caf/message.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>

namespace riomesh {

class runtime {
 public:
  using configure_fn = std::function<void(caf::actor_system_config&)>;

  // Starts a node with validated settings; throws std::runtime_error naming
  // the address if it cannot listen. `configure` adds the application's
  // message types (and anything else) before the actor system starts.
  explicit runtime(config::settings settings, configure_fn configure = {});
  // Loads, validates and starts; throws config::error for a bad file.
  static runtime from_file(const std::string& path, const config::overrides& extra = {},
                           configure_fn configure = {});

  runtime(runtime&&) noexcept;
  runtime& operator=(runtime&&) noexcept;
  // Stops, then waits for every actor to finish (CAF's actor system does);
  // until the last one has, they may still allocate().
  ~runtime();

  const config::settings& settings() const;
  const std::string& node_name() const;
  std::uint16_t port() const;  // where it listens (the real one for port 0)
  // The HTTP endpoint for operators (docs/operations.md): /metrics in
  // Prometheus's format, /healthz, /readyz. Served from construction when
  // node.metrics is set; a program that spawns its actors after
  // construction can start it itself once they are up. Throws
  // std::runtime_error if it cannot listen there. Port 0: any free port.
  std::uint16_t serve_metrics(const config::endpoint& at);
  std::uint16_t metrics_port() const;  // 0: not served
  std::size_t worker_threads() const;
  caf::actor_system& system();
  // The fabric this node's connections use, and why ("tcp: no RDMA device found").
  const std::string& fabric() const;
  // This node's "riomesh.admin" actor (admin.hpp): ping and stat_report,
  // also for the node's own actors (request it from within an actor).
  const admin_actor& admin() const;
  // The iomap manager: from inside an actor, request (grant_atom, node,
  // buffer, std::uint8_t rights, bool once) -> grant, or (revoke_atom,
  // grant id) -> bool, instead of the blocking make_grant and revoke.
  const iomap_manager_actor& iomap_manager() const;

  // Names an actor for the other nodes; it stays alive while published.
  template <class Handle>
  bool publish(const Handle& h, const std::string& name) {
    return publish_ptr(caf::actor_cast<caf::strong_actor_ptr>(h), name,
                       interface_of(system().message_types(h)));
  }
  bool unpublish(const std::string& name);

  // The actor published as `name` on `node`, as a proxy (a local handle for
  // this node's own name). Waits up to `timeout` for a configured node to
  // connect and answer. A typed Handle must match the published interface.
  // (A string_view: `{host, port}` could also make a std::string, and then
  // the call by address below would be ambiguous.)
  template <class Handle = caf::actor>
  caf::expected<Handle> remote_actor(std::string_view node_name, const std::string& name,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::string node{node_name};
    std::string remote_interface;
    auto ptr = resolve(node, name, timeout, remote_interface);
    if (!ptr)
      return std::move(ptr.error());
    if (!std::is_same<Handle, caf::actor>::value) {
      auto want = interface_of(system().template message_types<Handle>());
      if (want != remote_interface)
        return make_error(errc::interface_mismatch, "'" + name + "' on node '" + node +
                                                        "' has interface {" + remote_interface +
                                                        "}, expected {" + want + "}");
    }
    return caf::actor_cast<Handle>(std::move(*ptr));
  }

  // Connects to the node listening at `where`, authenticated like any
  // peer, and returns its name; from then on it is kept connected (redialed
  // when lost) as a configured peer is. Blocks up to `timeout`: from inside
  // an actor, request (riomesh::dial_atom, host, port) of admin() instead.
  caf::expected<std::string> connect(const config::endpoint& where,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The actor published as `name` on the node at `where`: connect, then
  // remote_actor by its name.
  template <class Handle = caf::actor>
  caf::expected<Handle> remote_actor(const config::endpoint& where, const std::string& name,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto node = connect(where, timeout);
    if (!node)
      return std::move(node.error());
    return remote_actor<Handle>(*node, name, timeout);
  }

  // `size` bytes of the node's registered pool: placed at the receiver
  // without a copy when sent at or above eager_threshold.
  buffer allocate(std::size_t size);
  // The user's memory, given back through `release` when the last handle
  // drops; below eager_threshold it is copied at once (and released).
  buffer wrap(void* data, std::size_t size, std::function<void()> release);

  // Where large buffers sent to `receiver` (an actor of this node) land
  // when their sender lends them (channel.rendezvous): this node reads
  // them into what `fn(size, from_node)` returns, at least `size` bytes
  // (memory the actor allocated, device memory, a slice of a buffer it
  // keeps), or an empty buffer for the node's own pool. `fn` runs on the
  // I/O thread, between messages: it must not block. A null `fn` removes
  // the actor's; so does nothing else, while the node runs.
  using destination_fn = std::function<buffer(std::size_t size, const std::string& from_node)>;
  template <class Handle>
  void receive_into(const Handle& receiver, destination_fn fn) {
    receive_into_id(caf::actor_cast<caf::actor_addr>(receiver).id(), std::move(fn));
  }

  // Direct placement, as rsockets' riomap / riowrite: expose() maps `b` for
  // `node` to write into and returns the offset to tell it; write() puts
  // `data` there, ahead of any message sent after it from the same thread,
  // so a message that follows is delivered after the data. A write the
  // peer has no map for is dropped and `notify` gets (undelivered_atom,
  // node, errc::not_mapped). Exposed memory stays alive until unexposed
  // or the connection ends.
  caf::expected<std::uint64_t> expose(const std::string& node, buffer b);
  bool unexpose(const std::string& node, std::uint64_t offset);
  void write(const std::string& node, std::uint64_t offset, buffer data,
             const caf::actor& notify = caf::actor{});

  // Remote memory grants (riomesh/grant.hpp; the README's "Grants"). The
  // owner lends `node` `region` (a buffer or a slice of one) to read, write
  // or both, for as long as the connection lasts, until revoked, or (once)
  // for one use; the grant goes to the holder in any message. Once
  // revoke() returns, no use of the grant succeeds.
  caf::expected<grant> make_grant(const std::string& node, buffer region, grant_rights rights,
                                  bool once = false);
  bool revoke(const grant& g);
  // The holder writes `data` at `offset` of the grant, or reads the
  // grant's bytes at `offset` into `into` (a buffer of this node's, e.g.
  // allocate()d: on rdma read into one-sided, elsewhere mapped for the
  // owner until it has written). Both return
  // the operation's id at once; `status_to` gets (grant_done_atom, id,
  // grant_status, detail) when it ends, and, if it went well, `then.to`
  // (an actor on the owner's node) gets `then.msg` from `status_to`,
  // after the owner has seen the bytes in place.
  struct then_message {
    caf::actor to;
    caf::message msg;
  };
  std::uint64_t write(const grant& g, std::uint64_t offset, buffer data,
                      const caf::actor& status_to, then_message then = {});
  std::uint64_t read(const grant& g, std::uint64_t offset, buffer into, const caf::actor& status_to,
                     then_message then = {});
  // Atomics on the 8-byte word at `offset` of a grant with both rights,
  // aligned to 8 bytes in the owner's memory: adds `add`, or swaps in
  // `desired` if the word is `expected`. On rdma a verbs atomic (on rxe
  // not atomic against the owner's own CPU atomics on the word); with
  // channel.read_depth 0, and on tcp, the owner's I/O thread with the
  // CPU's atomics. The status has the word's old value as a fifth element:
  // (grant_done_atom, id, grant_status, detail, std::uint64_t old).
  std::uint64_t fetch_add(const grant& g, std::uint64_t offset, std::uint64_t add,
                          const caf::actor& status_to, then_message then = {});
  std::uint64_t compare_swap(const grant& g, std::uint64_t offset, std::uint64_t expected,
                             std::uint64_t desired, const caf::actor& status_to,
                             then_message then = {});

  // Counters of this node and of each connection.
  node_stats stats();
  // `who` gets (writable_atom, node) once `node`'s queue, congested, has
  // drained to half; at once if no send to it was refused since it last did.
  void notify_writable(const std::string& node, const caf::actor& who);

  // Fails what waits on peers (errc::stopped), closes the connections and
  // ends the node's actors; the destructor does it too.
  void stop();

 private:
  static std::string interface_of(const std::set<std::string>& types);
  bool publish_ptr(caf::strong_actor_ptr who, const std::string& name, std::string interface);
  caf::expected<caf::strong_actor_ptr> resolve(const std::string& node, const std::string& name,
                                               std::chrono::milliseconds timeout,
                                               std::string& interface);
  void receive_into_id(std::uint64_t receiver, destination_fn fn);

  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace riomesh
