// The pub/sub example's actor types, for a node program's registry:
//   pubsub.broker      topics to subscribers
//   pubsub.publisher   sends samples to the broker
//   pubsub.subscriber  checks and measures what it gets
#pragma once

#include <riomesh/actor_registry.hpp>

namespace pubsub {

void add_types(riomesh::actor_registry& registry);

}  // namespace pubsub
