#include <riomesh/actors/scheduler.hpp>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include <algorithm>
#include <thread>

namespace riomesh::actors {

std::size_t worker_count(const config::runtime_settings& runtime) {
  if (runtime.threads != 0)
    return runtime.threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void apply(const config::runtime_settings& runtime, caf::actor_system_config& cfg) {
  cfg.set("scheduler.max-threads", worker_count(runtime));
  cfg.set("scheduler.policy", runtime.policy == config::scheduler_policy::stealing
                                  ? caf::atom("stealing")
                                  : caf::atom("sharing"));
}

}  // namespace riomesh::actors
