#include <riomesh/actors/scheduler.hpp>
#include <riomesh/actors/scheduler/deadline_clock.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/detail/set_thread_name.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>

#include <algorithm>
#include <thread>

namespace riomesh::actors {
namespace {

// CAF's coordinator with the deadline clock in place of CAF's own. CAF's
// clock thread still starts (the coordinator starts it on its own member)
// but sleeps for good: no event reaches it, as clock() is the only way in.
template <class Policy>
class clocked_coordinator final : public caf::scheduler::coordinator<Policy> {
 public:
  using super = caf::scheduler::coordinator<Policy>;
  using super::super;

  deadline_clock& clock() noexcept override { return clock_; }

 protected:
  void start() override {
    thread_ = std::thread{[this] {
      caf::detail::set_thread_name("riomesh.clock");
      this->system().thread_started();
      clock_.run();
      this->system().thread_terminates();
    }};
    super::start();
  }

  // The workers go first, as in CAF: until they are gone, actors may still
  // set timeouts, and timeouts may still fall due.
  void stop() override {
    super::stop();
    clock_.stop();
    if (thread_.joinable())
      thread_.join();
  }

 private:
  deadline_clock clock_;
  std::thread thread_;
};

template <class Policy>
caf::actor_system::module* make_coordinator(caf::actor_system& sys) {
  return new clocked_coordinator<Policy>(sys);
}

}  // namespace

std::size_t worker_count(const config::runtime_settings& runtime) {
  if (runtime.threads != 0)
    return runtime.threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void apply(const config::runtime_settings& runtime, caf::actor_system_config& cfg) {
  bool stealing = runtime.policy == config::scheduler_policy::stealing;
  cfg.set("scheduler.max-threads", worker_count(runtime));
  cfg.set("scheduler.policy", stealing ? caf::atom("stealing") : caf::atom("sharing"));
  // A scheduler module given by a factory takes the place of the one CAF
  // would build from scheduler.policy.
  cfg.module_factories.push_back(stealing ? make_coordinator<caf::policy::work_stealing>
                                          : make_coordinator<caf::policy::work_sharing>);
}

}  // namespace riomesh::actors
