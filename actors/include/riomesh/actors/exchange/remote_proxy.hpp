// A local stand-in for an actor on another node, with that actor's own id
// and node id, as CAF's own proxies have: so a handle to it that crosses
// the wire again names the actor itself, never an actor of this node.
// Whatever is enqueued to it (one-way messages, requests, responses to
// requests it made) is encoded on the enqueuing thread and queued on the
// link to its node (exchange.hpp), with its sender and message id: one
// hand-off to the wire.
// Monitors and links on it work as on any local actor: when the node is
// lost or the remote actor exits, the exchange kills the proxy with that
// reason, and every monitor gets its down message. A link to it is told to
// the remote node, which links its actor to a proxy of the linking one:
// either one's exit reaches the other (as a down of the actor that exited,
// which kills its proxy). An exit message sent to it is dropped: no node
// stops another's actors. A message enqueued after it was killed bounces:
// a request gets the error at once.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_proxy.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace riomesh::actors {

class exchange;

class remote_proxy : public caf::actor_proxy {
 public:
  remote_proxy(caf::actor_config& cfg, std::shared_ptr<exchange> x, std::string peer);

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* ctx) override;
  void kill_proxy(caf::execution_unit* ctx, caf::error reason) override;
  bool add_backlink(caf::abstract_actor* x) override;
  bool remove_backlink(caf::abstract_actor* x) override;

  const std::string& peer() const { return peer_; }

  // Links made or ended on behalf of the remote node (its link envelope)
  // are not told back to it.
  struct quiet_links {
    quiet_links();
    ~quiet_links();
  };

 private:
  std::shared_ptr<exchange> live_exchange();

  std::mutex mtx_;
  std::shared_ptr<exchange> exchange_;  // null once killed
  caf::error reason_;                   // why it was killed
  std::string peer_;
};

// A new proxy for actor `id` of node `nid`, whose name is `peer`.
caf::strong_actor_ptr make_remote_proxy(caf::actor_system& sys, std::shared_ptr<exchange> x,
                                        const std::string& peer, const caf::node_id& nid,
                                        std::uint64_t id);

}  // namespace riomesh::actors
