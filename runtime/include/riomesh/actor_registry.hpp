// The actor types a node file may name in `actors:`. Applications add their
// own and run the same YAML through node_main (node_main.hpp):
//
//   riomesh::actor_registry types;
//   types.configure([](caf::actor_system_config& cfg) { cfg.add_message_type<job>("job"); });
//   types.add("my.worker", "answers jobs", [](riomesh::config::actor_params& p) {
//     auto depth = p.count("depth", 4, 1, 64);       // problems name file and line
//     return [=](riomesh::runtime& rt) { return riomesh::spawned{rt.system().spawn(worker, depth)};
//     };
//   });
//   return riomesh::node_main(argc, argv, types);
//
// A factory only reads parameters; spawning waits until every entry of the
// file has been read, so a bad file is reported whole and nothing starts.
#pragma once

#include <riomesh/config/actor_params.hpp>
#include <riomesh/config/settings.hpp>
#include <riomesh/runtime.hpp>

#include <caf/actor_addr.hpp>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace riomesh {

// An actor a spawner made, typed or not, ready to be published by name with
// its interface (so typed remote_actor lookups are checked against it).
class spawned {
 public:
  template <class Handle>
  spawned(Handle h)  // NOLINT: implicit, so spawners return any handle
      : address_(h.address()),
        publish_([h](runtime& rt, const std::string& name) { return rt.publish(h, name); }) {}
  bool publish(runtime& rt, const std::string& name) const { return publish_(rt, name); }
  const caf::actor_addr& address() const { return address_; }

 private:
  caf::actor_addr address_;
  std::function<bool(runtime&, const std::string&)> publish_;
};

class actor_registry {
 public:
  using spawner = std::function<spawned(runtime&)>;
  using factory = std::function<spawner(config::actor_params&)>;

  // `type` is what the `type:` key names; `summary` is shown by --list-types.
  void add(const std::string& type, const std::string& summary, factory make);
  // Run on the actor system's config before it starts: message types.
  void configure(runtime::configure_fn hook);

  runtime::configure_fn configurer() const;
  std::vector<std::pair<std::string, std::string>> types() const;  // type, summary

  // Reads every entry's parameters. Throws config::error with every problem
  // (unknown types and parameters included), each at its file position.
  std::vector<std::pair<config::actor_spec, spawner>> prepare(const config::settings& s) const;

 private:
  struct entry {
    std::string summary;
    factory make;
  };
  std::map<std::string, entry> types_;
  std::vector<runtime::configure_fn> hooks_;
};

}  // namespace riomesh
