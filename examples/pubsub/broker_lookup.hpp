// Finding the broker from a publisher or subscriber: through the node's
// admin actor, so that the actor never blocks, retried until it answers.
#pragma once

#include "actors.hpp"
#include "messages.hpp"

#include <riomesh/admin.hpp>
#include <riomesh/errc.hpp>

#include <caf/event_based_actor.hpp>

namespace pubsub {

// On success `found(handle)`; otherwise `self` gets (retry_atom) after a
// pause and should call this again.
template <class Found>
void look_up_broker(caf::event_based_actor* self, const riomesh::admin_actor& admin,
                    const broker_address& where, Found found) {
  self->request(admin, std::chrono::seconds(5), riomesh::resolve_atom::value, where.node,
                where.actor, std::chrono::milliseconds(1000))
      .then([=](caf::strong_actor_ptr& who,
                std::string&) mutable { found(caf::actor_cast<caf::actor>(std::move(who))); },
            [=](caf::error&) {
              self->delayed_send(self, std::chrono::milliseconds(250), retry_atom::value);
            });
}

// Whether an error means the actor asked is gone (its node lost, or
// unknown to ours since its connection closed), not just this request.
inline bool peer_gone(const caf::error& e) {
  return riomesh::is(e, riomesh::errc::node_lost) || riomesh::is(e, riomesh::errc::actor_exited) ||
         riomesh::is(e, riomesh::errc::not_connected) ||
         riomesh::is(e, riomesh::errc::unknown_node) || riomesh::is(e, riomesh::errc::stopped);
}

}  // namespace pubsub
