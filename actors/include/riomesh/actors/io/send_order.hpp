// A message for the peer as it waits in its connection actor's mailbox
// (io/connection_actor.hpp): the one hand-off from a sender's thread to
// the I/O thread. An order dropped before its connection took it (the
// connection ended, its mailbox closed under it) tells its sender, so no
// message is lost without a word.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <caf/allowed_unsafe_message_type.hpp>

#include <utility>

namespace riomesh::actors {

class send_order {
 public:
  send_order() = default;
  explicit send_order(outbound_message&& m) : msg_(std::move(m)) {}
  send_order(send_order&& other) noexcept : msg_(std::move(other.msg_)) {
    other.msg_.on_failure = nullptr;
  }
  // CAF's message types must be copyable; nothing copies an order, and a
  // copy would not be one: it carries nothing.
  send_order(const send_order&) {}
  send_order& operator=(const send_order&) = delete;
  send_order& operator=(send_order&&) = delete;
  ~send_order() {
    if (msg_.on_failure)
      msg_.on_failure(send_failure::node_lost, "connection closed before the message went");
  }

  // The message, for the connection: the duty to report goes with it.
  outbound_message take() {
    outbound_message m = std::move(msg_);
    msg_.on_failure = nullptr;
    return m;
  }

 private:
  outbound_message msg_;
};

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::send_order)
