// The iomap manager: one actor per node for what the node exposes to its
// peers and the slow path of its memory domain.
//
// Exposing (riomap) and unexposing (riounmap) are messages to it:
//   (expose_atom, peer, buffer) -> the offset the peer writes to
//   (unexpose_atom, peer, offset) -> whether a map was taken down
// So are lending memory to a peer and taking it back (riomesh/grant.hpp):
//   (grant_atom, peer, buffer, rights, once) -> the grant (mapped for the
//     peer if it may write)
//   (revoke_atom, grant id) -> whether it was still given; once answered,
//     no use of it succeeds and its map is down
// It reaches the peer's link through the exchange's routes and has the
// link's I/O thread bind or unbind the map (a memory window or a
// registration on rdma, a map entry on tcp), one hand-off each way.
//
// Connections never ask it anything on the hot path: they read and fill the
// domain's shared send cache on the I/O thread themselves, since a send
// cannot wait for a mailbox. What the manager does besides is what has
// time: it gives back the send registrations nothing used for `idle`,
// looking every quarter of that, so memory sent from once does not stay
// pinned for the life of the node.
#pragma once

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

caf::actor spawn_iomap_manager(caf::actor_system& sys, iomap_manager_params p);

}  // namespace riomesh::actors
