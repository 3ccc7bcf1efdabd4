// A local stand-in for an actor on another node. Whatever is enqueued to it
// (one-way messages, requests, responses to requests it made) goes to the
// directory with its sender and message id, and from there over the wire.
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
#include <mutex>
#include <string>

namespace riomesh::actors {

// What a proxy hands the directory (local only).
struct forwarded {
  std::string peer;
  std::uint64_t remote_id = 0;
  caf::strong_actor_ptr proxy;
  caf::strong_actor_ptr sender;
  caf::message_id mid;
  caf::message content;
};

class remote_proxy : public caf::actor_proxy {
 public:
  remote_proxy(caf::actor_config& cfg, caf::actor directory, std::string peer,
               std::uint64_t remote_id);

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* ctx) override;
  void kill_proxy(caf::execution_unit* ctx, caf::error reason) override;

  const std::string& peer() const { return peer_; }
  std::uint64_t remote_id() const { return remote_id_; }

 private:
  std::mutex mtx_;
  caf::actor directory_;  // null once killed
  caf::error reason_;     // why it was killed
  std::string peer_;
  std::uint64_t remote_id_;
};

// A new proxy for actor `remote_id` on `peer`, with a local actor id and a
// node id derived from the peer's name.
caf::strong_actor_ptr make_remote_proxy(caf::actor_system& sys, caf::actor directory,
                                        const std::string& peer, std::uint64_t remote_id);

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::forwarded)
