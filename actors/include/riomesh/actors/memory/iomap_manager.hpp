// The iomap manager: one actor per node for what the node exposes to its
// peers and the slow path of its memory domain.
//
// Exposing (riomap) and unexposing (riounmap), lending memory to a peer and
// taking it back are messages to it (riomesh/iomap.hpp). It reaches the
// peer's link through the exchange's routes and has the link's I/O thread
// bind or unbind the map (a memory window or a registration on rdma, a map
// entry on tcp); the link's answer comes back as a message of its own
// (link_mapped, link_unmapped, link_lent), so that only the manager's
// thread touches its promises: one hand-off each way.
//
// Connections never ask it anything on the hot path: they read and fill the
// domain's shared send cache on the I/O thread themselves, since a send
// cannot wait for a mailbox. What the manager does besides is what has
// time: it gives back the send registrations nothing used for `idle`,
// looking every quarter of that, so memory sent from once does not stay
// pinned for the life of the node.
#pragma once

#include <riomesh/actors/atoms.hpp>
#include <riomesh/iomap.hpp>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>

namespace riomesh::channels::verbs {
class memory_domain;
}

namespace riomesh::actors {

class exchange;
class io_loop;

struct iomap_manager_params {
  std::shared_ptr<exchange> x;  // the routes to peers' links
  io_loop* loop = nullptr;      // their I/O thread; outlives the actor
  std::shared_ptr<channels::verbs::memory_domain> domain;
  std::chrono::nanoseconds idle{0};  // 0: send registrations stay cached
};

// A link's answers, from its I/O thread, to the request `key` stands for.
struct link_mapped {
  std::uint64_t key = 0;
  std::uint64_t offset = 0;
  caf::error error;  // none: mapped at `offset`
};
struct link_unmapped {
  std::uint64_t key = 0;
  bool done = false;
};
struct link_lent {
  std::uint64_t key = 0;
  grant lent;
  caf::error error;  // none: `lent` is the grant
};

using iomap_manager_impl =
    iomap_manager_actor::extend<caf::reacts_to<link_mapped>, caf::reacts_to<link_unmapped>,
                                caf::reacts_to<link_lent>, caf::reacts_to<trim_atom>>;

iomap_manager_impl spawn_iomap_manager(caf::actor_system& sys, iomap_manager_params p);

}  // namespace riomesh::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::link_mapped)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::link_unmapped)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(riomesh::actors::link_lent)
