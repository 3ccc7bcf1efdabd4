// Maps riomesh's runtime settings onto CAF's scheduler configuration.
#pragma once

#include <riomesh/config/settings.hpp>

#include <cstddef>

namespace caf {
class actor_system_config;
}

namespace riomesh::actors {

// The worker count for `threads` (0: one per core).
std::size_t worker_count(const config::runtime_settings& runtime);

// Sets scheduler.max-threads and scheduler.policy, and installs CAF's
// scheduler for that policy with riomesh's deadline clock in place of CAF's
// own (scheduler/deadline_clock.hpp). CAF 0.17 silently ignores a policy
// given as a string, so this is the one place that sets it, as an atom.
void apply(const config::runtime_settings& runtime, caf::actor_system_config& cfg);

}  // namespace riomesh::actors
