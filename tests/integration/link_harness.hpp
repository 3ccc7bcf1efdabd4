// What tests of links over real channels share: the actor system, an I/O
// thread with its connection host, and a link's parameters.
#pragma once

#include <riomesh/actors/handshake/tls_context.hpp>
#include <riomesh/actors/io/connection_actor.hpp>
#include <riomesh/actors/io/connection_host.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/link.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <memory>
#include <string>
#include <utility>

namespace riomesh::test {

inline actors::connection_params link_params(const std::string& name, const std::string& secret,
                                             bool dialed) {
  actors::connection_params p;
  p.node_name = name;
  actors::credentials c;
  c.secret = secret;
  p.tls = std::make_shared<actors::tls_context>(name, c);
  p.dialed = dialed;
  p.arena_size = 1 << 20;
  p.releases.delay = std::chrono::microseconds(0);
  p.tick = std::chrono::milliseconds(50);
  return p;
}

// The actor system and one I/O thread with its connection host: what
// every connection needs. The loop stops first, ending its connections
// while the system still runs their actors.
struct io_thread {
  caf::actor_system& sys;
  actors::io_loop loop;
  actors::connection_host host{sys, loop};
  explicit io_thread(caf::actor_system& s) : sys(s) {}
  ~io_thread() { loop.stop(); }
  // A link with its actor, adopted by the loop.
  std::pair<std::shared_ptr<actors::link>, actors::connection_actor> adopt(
      std::uint64_t id, std::shared_ptr<channels::channel> ch, const actors::connection_params& p,
      const std::shared_ptr<actors::link_events>& events) {
    auto l = std::make_shared<actors::link>(id, std::move(ch), p, loop, events);
    auto actor = actors::spawn_connection(sys, host, l);
    loop.adopt(l);
    return {l, actor};
  }
};

struct actor_system_holder {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  actor_system_holder() {
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

}  // namespace riomesh::test
