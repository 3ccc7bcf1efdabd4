// The embedding API: one riomesh node inside a user's program.
#pragma once

#include <riomesh/config/overrides.hpp>
#include <riomesh/config/settings.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace caf {
class actor_system;
}

namespace riomesh {

class runtime {
 public:
  // Starts the actor system of a node with validated settings.
  explicit runtime(config::settings settings);
  // Loads, validates and starts; throws config::error for a bad file.
  static runtime from_file(const std::string& path, const config::overrides& extra = {});

  runtime(runtime&&) noexcept;
  runtime& operator=(runtime&&) noexcept;
  ~runtime();  // stops

  const config::settings& settings() const;
  std::size_t worker_threads() const;
  caf::actor_system& system();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace riomesh
