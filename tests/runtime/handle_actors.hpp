// The actors the handle tests use (handles_test.cpp in one process,
// process_test.cpp across processes through runtime_peer): a collector that
// remembers what it was told, and a forwarder that acts on the handles it
// is sent.
#pragma once

#include "cluster.hpp"

#include <caf/event_based_actor.hpp>

#include <string>
#include <vector>

namespace riomesh::test {

using fetch_atom = caf::atom_constant<caf::atom("t_fetch")>;
using watch_atom = caf::atom_constant<caf::atom("t_watch")>;
using tie_atom = caf::atom_constant<caf::atom("t_tie")>;

// Remembers what it was told, in order: texts, down and exit reasons;
// (fetch_atom) -> the lines. (Class-based: CAF 0.17 spawns a function
// without arguments through a null tuple pointer, which UBSan reports.)
class collector : public caf::event_based_actor {
 public:
  explicit collector(caf::actor_config& cfg);
  caf::behavior make_behavior() override;

 protected:
  std::vector<std::string> lines_;
};

// A collector that also passes a text on to the handle it came with
// (to_whom; to_address: by address, weak and strong pointer), asks a typed
// handle for a sum (to_calc), sends a to_whom on to another actor
// ((caf::actor via, to_whom)), and monitors or links to a handle when told
// ((watch_atom | tie_atom, caf::actor)).
class forwarder : public collector {
 public:
  using collector::collector;
  caf::behavior make_behavior() override;
};

// What `who` was told so far (asked from an actor of `rt`); throws
// std::runtime_error if it does not answer.
std::vector<std::string> lines_of(runtime& rt, const caf::actor& who);
// Waits until `who` has heard a line starting with `text`; false after 15 s.
bool hears(runtime& rt, const caf::actor& who, const std::string& text);

}  // namespace riomesh::test
