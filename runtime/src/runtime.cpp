#include <riomesh/runtime.hpp>

#include <riomesh/actors/scheduler.hpp>
#include <riomesh/config/loader.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

namespace riomesh {
namespace {

std::unique_ptr<caf::actor_system_config> make_config(const config::settings& s) {
  auto cfg = std::make_unique<caf::actor_system_config>();
  actors::apply(s.runtime, *cfg);
  return cfg;
}

}  // namespace

struct runtime::impl {
  explicit impl(config::settings s)
      : settings(std::move(s)), cfg(make_config(settings)), system(*cfg) {}

  config::settings settings;
  std::unique_ptr<caf::actor_system_config> cfg;  // must outlive `system`
  caf::actor_system system;
};

runtime::runtime(config::settings settings) : impl_(std::make_unique<impl>(std::move(settings))) {}

runtime runtime::from_file(const std::string& path, const config::overrides& extra) {
  return runtime{config::load_file(path, extra)};
}

runtime::runtime(runtime&&) noexcept = default;
runtime& runtime::operator=(runtime&&) noexcept = default;
runtime::~runtime() = default;

const config::settings& runtime::settings() const {
  return impl_->settings;
}

std::size_t runtime::worker_threads() const {
  return impl_->system.scheduler().num_workers();
}

caf::actor_system& runtime::system() {
  return impl_->system;
}

}  // namespace riomesh
