// What a runtime's destruction may meet: actors that are still running and
// still use it. Its destructor waits for them (CAF's actor system does), so
// everything they use must outlive that wait.
#include "cluster.hpp"

#include <caf/event_based_actor.hpp>

#include <doctest/doctest.h>

#include <atomic>

using namespace riomesh;
using namespace riomesh::test;

namespace {

// Allocates `left` buffers, one per message to itself, then quits.
caf::behavior allocator(caf::event_based_actor* self, runtime* rt, int left,
                        std::atomic<int>* done) {
  self->send(self, caf::tick_atom::value);
  return {[=](caf::tick_atom) mutable {
    auto b = rt->allocate(64 << 10);
    if (b.size() == 64u << 10)
      ++*done;
    if (--left > 0)
      self->send(self, caf::tick_atom::value);
    else
      self->quit();
  }};
}

}  // namespace

TEST_CASE("runtime: an actor still allocating when the runtime is destroyed finishes") {
  std::atomic<int> done{0};
  constexpr int rounds = 20000;
  {
    auto rt = start_node(node_settings("node-a"));
    rt->system().spawn(allocator, rt.get(), rounds, &done);
    // Destroyed at once: the actor has most of its rounds still to go.
  }
  CHECK(done.load() == rounds);
}
