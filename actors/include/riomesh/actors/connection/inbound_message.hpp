// A message as the connection hands it on: its envelope and its buffers.
#pragma once

#include <riomesh/actors/envelope/envelope.hpp>
#include <riomesh/buffer.hpp>

#include <vector>

namespace riomesh::actors {

struct inbound_message {
  envelope env;
  // Views of our arena, or (lent buffers) the memory they were fetched into.
  std::vector<buffer> placed;
};

}  // namespace riomesh::actors
