// The runtime's scheduler settings must reach CAF: 0.17 silently ignores a
// policy given as a string, so this checks the scheduler CAF actually built.
#include <riomesh/actors/scheduler.hpp>
#include <riomesh/runtime.hpp>

#include <caf/actor_system.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <typeinfo>

using namespace riomesh;

namespace {

config::settings with(std::uint32_t threads, config::scheduler_policy policy) {
  config::settings s;
  s.node.name = "t";
  s.node.listen = {"127.0.0.1", 0};
  s.runtime.threads = threads;
  s.runtime.policy = policy;
  return s;
}

std::string scheduler_type(caf::actor_system& sys) {
  return typeid(sys.scheduler()).name();
}

}  // namespace

TEST_CASE("threads and policy reach CAF's scheduler") {
  runtime sharing{with(3, config::scheduler_policy::sharing)};
  CHECK(sharing.worker_threads() == 3);
  runtime stealing{with(1, config::scheduler_policy::stealing)};
  CHECK(stealing.worker_threads() == 1);
  auto a = scheduler_type(sharing.system());
  auto b = scheduler_type(stealing.system());
  CHECK(a.find("work_sharing") != std::string::npos);
  CHECK(b.find("work_stealing") != std::string::npos);
}

TEST_CASE("threads: auto means one worker per core") {
  runtime rt{with(0, config::scheduler_policy::sharing)};
  CHECK(rt.worker_threads() == std::max(1u, std::thread::hardware_concurrency()));
  CHECK(actors::worker_count(config::runtime_settings{}) == rt.worker_threads());
}
