// A local stand-in for an actor on another node. Whatever is enqueued to it
// (one-way messages, requests, responses to requests it made) is encoded on
// the enqueuing thread and queued on the link to its node (exchange.hpp),
// with its sender and message id: one hand-off to the wire.
// Monitors and links on it work as on any local actor: when the node is
// lost or the remote actor exits, the directory kills the proxy with that
// reason, and every monitor gets its down message. A message enqueued
// after that bounces: a request gets the error at once.
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
  remote_proxy(caf::actor_config& cfg, std::shared_ptr<exchange> x, std::string peer,
               std::uint64_t remote_id);

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* ctx) override;
  void kill_proxy(caf::execution_unit* ctx, caf::error reason) override;

  const std::string& peer() const { return peer_; }
  std::uint64_t remote_id() const { return remote_id_; }

 private:
  std::mutex mtx_;
  std::shared_ptr<exchange> exchange_;  // null once killed
  caf::error reason_;                   // why it was killed
  std::string peer_;
  std::uint64_t remote_id_;
};

// A new proxy for actor `remote_id` on `peer`, with a local actor id and a
// node id derived from the peer's name.
caf::strong_actor_ptr make_remote_proxy(caf::actor_system& sys, std::shared_ptr<exchange> x,
                                        const std::string& peer, std::uint64_t remote_id);

}  // namespace riomesh::actors
