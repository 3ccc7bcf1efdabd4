// riomesh-node: one node from a YAML file (riomesh/node_main.hpp). It knows
// the pub/sub example's actor types; a program with its own types is this
// same file with its own registry.add(...) calls.
#include <riomesh/node_main.hpp>

#include <pubsub.hpp>

int main(int argc, char** argv) {
  riomesh::actor_registry types;
  pubsub::add_types(types);
  return riomesh::node_main(argc, argv, types);
}
