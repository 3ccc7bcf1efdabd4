// The iomap manager: the slow path of the node's memory domain, as an
// actor. Connections never send it anything: they read and fill the
// domain's shared send cache on the I/O thread themselves, since a send
// cannot wait for a mailbox. What the manager does is what has time: it
// gives back the send registrations nothing used for `idle`, looking every
// quarter of that, so memory sent from once does not stay pinned for the
// life of the node.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <memory>

namespace riomesh::channels::verbs {
class memory_domain;
}

namespace riomesh::actors {

caf::actor spawn_iomap_manager(caf::actor_system& sys,
                               std::shared_ptr<channels::verbs::memory_domain> domain,
                               std::chrono::nanoseconds idle);

}  // namespace riomesh::actors
