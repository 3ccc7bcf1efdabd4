// Who a node is to actor handles: CAF's node id (a host id and a process
// id), which every handle of its actors carries, and where it listens. Told
// in its session's hello (session_hello.hpp), kept by the node table.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace riomesh::actors {

struct node_identity {
  std::uint32_t process_id = 0;
  std::array<std::uint8_t, 20> host_id{};
  std::string listen_host;  // empty: the address its connections come from
  std::uint16_t listen_port = 0;
  bool valid() const {
    for (auto b : host_id)
      if (b != 0)
        return true;
    return false;
  }
};

}  // namespace riomesh::actors
