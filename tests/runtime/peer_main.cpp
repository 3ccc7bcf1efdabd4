// A riomesh node in its own process, for the multi-process runtime tests:
//   runtime_peer NAME ROLE [PORT [PEER_NAME PEER_PORT]]
// ROLE serve: publishes "sink", "calc" and "hole" (cluster.hpp); ROLE slow: its
// "sink" takes 2 ms per message, a receiver that falls behind. It prints
// "ready PORT" once listening and runs until stdin closes (or it is
// killed), then stops cleanly. RIOMESH_CHANNEL=rdma as for the tests.
#include "cluster.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <iostream>

using namespace riomesh;
using namespace riomesh::test;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: runtime_peer NAME serve|slow [PORT [PEER_NAME PEER_PORT]]\n";
    return 2;
  }
  std::string name = argv[1], role = argv[2];
  std::vector<std::pair<std::string, std::uint16_t>> peers;
  if (argc >= 6)
    peers.emplace_back(argv[4], static_cast<std::uint16_t>(std::stoi(argv[5])));
  auto s = node_settings(name, peers);
  if (argc >= 4)
    s.node.listen.port = static_cast<std::uint16_t>(std::stoi(argv[3]));
  try {
    auto rt = start_node(s);
    if (role == "slow")
      rt->publish(rt->system().spawn(paced_sink, std::chrono::milliseconds(2)), "sink");
    else
      rt->publish(spawn_sink(rt->system()), "sink");
    rt->publish(spawn_calc(rt->system()), "calc");
    auto hole = spawn_black_hole(rt->system());
    rt->publish(hole, "hole");
    std::cout << "ready " << rt->port() << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    caf::anon_send_exit(hole, caf::exit_reason::kill);
    rt->stop();
  } catch (const std::exception& e) {
    std::cerr << "runtime_peer " << name << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
