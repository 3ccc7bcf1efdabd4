// A riomesh node in its own process, for the multi-process runtime tests:
//   runtime_peer NAME ROLE [PORT [PEER_NAME PEER_PORT]]
// ROLE serve: publishes "sink", "calc" and "hole" (cluster.hpp), "forwarder"
// and "collector" (handle_actors.hpp; the collector's actor id is 1000 or
// more, above the test process's: the id collision tests); ROLE slow: its
// "sink" takes 2 ms per message, a receiver that falls behind; ROLE stream:
// serves too, and streams blobs to PEER_NAME's "sink" (small and large in
// turn, each filled from its sequence number) until it ends. It prints
// "ready PORT" once listening and runs until stdin closes (or it is
// killed), then stops cleanly. RIOMESH_CHANNEL=rdma as for the tests;
// RUNTIME_PEER_INFO=1 logs at info (the tests' nodes log warnings only).
// RUNTIME_PEER_KEY=FILE: its node key (PEM); RUNTIME_PEER_KEYS=NAME=KEY,...:
// the public keys it trusts. RUNTIME_PEER_MAX_SESSIONS=N,
// RUNTIME_PEER_ARENA=BYTES, RUNTIME_PEER_ARENA_MIN=BYTES and
// RUNTIME_PEER_ARENA_BUDGET=BYTES: cluster.max_sessions, channel.arena,
// channel.arena_min and memory.arena_budget. RUNTIME_PEER_ADMINS=NAME,...: cluster.admins.
#include "cluster.hpp"
#include "handle_actors.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <riomesh/config/key_text.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;

namespace {

// One blob every 2 ms, 1 KiB (inline) and 192 KiB (placed in the arena) in
// turn; a send refused as congested is skipped, so the sink may see gaps
// but never a repeat, a reordering or a corrupted payload.
caf::behavior stream_to(caf::event_based_actor* self, caf::actor sink, runtime* rt) {
  self->set_default_handler(caf::drop);
  auto seq = std::make_shared<std::uint64_t>(0);
  self->send(self, caf::tick_atom::value);
  return {[=](caf::tick_atom) {
    auto data = rt->allocate(*seq % 2 ? 192 << 10 : 1 << 10);
    fill(data, *seq);
    self->send(sink, blob{(*seq)++, data});
    self->delayed_send(self, std::chrono::milliseconds(2), caf::tick_atom::value);
  }};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: runtime_peer NAME serve|slow|stream [PORT [PEER_NAME PEER_PORT]]\n";
    return 2;
  }
  std::string name = argv[1], role = argv[2];
  std::vector<std::pair<std::string, std::uint16_t>> peers;
  if (argc >= 6)
    peers.emplace_back(argv[4], static_cast<std::uint16_t>(std::stoi(argv[5])));
  auto s = node_settings(name, peers);
  if (const char* info = std::getenv("RUNTIME_PEER_INFO"); info && *info == '1')
    s.logging.level = config::log_level::info;
  if (const char* key = std::getenv("RUNTIME_PEER_KEY"); key && *key) {
    std::ifstream in(key);
    std::string pem{std::istreambuf_iterator<char>(in), {}}, error;
    s.node.key = config::parse_private_key(pem, error);
    if (s.node.key.empty()) {
      std::cerr << "runtime_peer " << name << ": " << key << ": " << error << "\n";
      return 1;
    }
  }
  if (const char* keys = std::getenv("RUNTIME_PEER_KEYS"); keys && *keys) {
    std::stringstream list(keys);
    std::string entry, error;
    while (std::getline(list, entry, ',')) {
      auto eq = entry.find('=');
      s.cluster.keys.emplace_back(entry.substr(0, eq),
                                  config::parse_public_key(entry.substr(eq + 1), error));
    }
  }
  if (const char* admins = std::getenv("RUNTIME_PEER_ADMINS"); admins && *admins) {
    std::stringstream list(admins);
    for (std::string name; std::getline(list, name, ',');)
      s.cluster.admins.push_back(name);
  }
  if (const char* n = std::getenv("RUNTIME_PEER_MAX_SESSIONS"); n && *n)
    s.cluster.max_sessions = static_cast<std::uint32_t>(std::stoul(n));
  if (const char* n = std::getenv("RUNTIME_PEER_TIMEOUT_MS"); n && *n)
    s.channel.peer_timeout = std::chrono::milliseconds(std::stoul(n));
  if (const char* n = std::getenv("RUNTIME_PEER_ARENA"); n && *n)
    s.channel.arena = std::stoull(n);
  if (const char* n = std::getenv("RUNTIME_PEER_ARENA_MIN"); n && *n)
    s.channel.arena_min = std::stoull(n);
  if (const char* n = std::getenv("RUNTIME_PEER_ARENA_BUDGET"); n && *n)
    s.memory.arena_budget = std::stoull(n);
  if (argc >= 4)
    s.node.listen.port = static_cast<std::uint16_t>(std::stoi(argv[3]));
  try {
    auto rt = start_node(s);
    if (role == "slow")
      rt->publish(rt->system().spawn(paced_sink, std::chrono::milliseconds(2)), "sink");
    else
      rt->publish(spawn_sink(rt->system()), "sink");
    rt->publish(spawn_calc(rt->system()), "calc");
    auto fwd = rt->system().spawn<forwarder>();
    rt->publish(fwd, "forwarder");
    auto coll = rt->system().spawn<collector>();
    while (coll.id() < 1000) {
      caf::anon_send_exit(coll, caf::exit_reason::kill);
      coll = rt->system().spawn<collector>();
    }
    rt->publish(coll, "collector");
    auto hole = spawn_black_hole(rt->system());
    rt->publish(hole, "hole");
    caf::actor streamer;
    if (role == "stream") {
      auto to = rt->remote_actor(peers.at(0).first, "sink", std::chrono::seconds(30));
      if (!to)
        throw std::runtime_error("no sink at " + peers.at(0).first + ": " +
                                 rt->system().render(to.error()));
      streamer = rt->system().spawn(stream_to, *to, rt.get());
    }
    std::cout << "ready " << rt->port() << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    caf::anon_send_exit(hole, caf::exit_reason::kill);
    caf::anon_send_exit(fwd, caf::exit_reason::kill);
    caf::anon_send_exit(coll, caf::exit_reason::kill);
    if (streamer)
      caf::anon_send_exit(streamer, caf::exit_reason::kill);
    rt->stop();
  } catch (const std::exception& e) {
    std::cerr << "runtime_peer " << name << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
