// What the README's C++ snippets take as given, declared so that they
// compile as written (readme_snippets.cmake wraps each snippet in a
// function of its own namespace, which sees these).
#pragma once

#include <riomesh/buffer_inspect.hpp>
#include <riomesh/config/actor_params.hpp>
#include <riomesh/runtime.hpp>

#include <caf/event_based_actor.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace readme {

using namespace std::chrono_literals;

struct job {
  riomesh::buffer data;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job& x) {
  return f(caf::meta::type_name("job"), x.data);
}

using worker_actor = caf::typed_actor<caf::replies_to<job>::with<std::uint64_t>>;

// "Actors across nodes": a node's settings, a worker to publish, the actor
// that asks, and a node's address.
namespace runtime_api {
inline riomesh::config::settings settings;
inline worker_actor worker;
inline caf::event_based_actor* self = nullptr;
inline std::string host = "10.0.0.2";
inline std::uint16_t port = 7471;
}  // namespace runtime_api

// "Nodes from YAML files": the worker as a function actor taking a depth.
namespace node_main {
inline worker_actor::behavior_type worker(worker_actor::pointer, std::uint64_t depth) {
  return {[depth](const job& j) { return depth + j.data.size(); }};
}
}  // namespace node_main

}  // namespace readme
