#include <riomesh/actors/atoms.hpp>
#include <riomesh/actors/memory/iomap_manager.hpp>
#include <riomesh/channels/verbs/memory_domain.hpp>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

caf::behavior iomap_manager(caf::event_based_actor* self,
                            std::shared_ptr<channels::verbs::memory_domain> domain,
                            std::chrono::nanoseconds idle) {
  auto every = std::clamp<std::chrono::nanoseconds>(idle / 4, std::chrono::milliseconds(10),
                                                    std::chrono::seconds(10));
  self->delayed_send(self, every, trim_atom::value);
  return {
      [=](trim_atom) {
        domain->trim(idle);
        self->delayed_send(self, every, trim_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_iomap_manager(caf::actor_system& sys,
                               std::shared_ptr<channels::verbs::memory_domain> domain,
                               std::chrono::nanoseconds idle) {
  return sys.spawn(iomap_manager, std::move(domain), idle);
}

}  // namespace riomesh::actors
