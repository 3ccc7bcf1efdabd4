// The bytes a publisher sends and how a subscriber checks them: a pattern
// that differs per publisher and sequence number, and a checksum that reads
// eight bytes at a time so that checking keeps up with the network.
#pragma once

#include <riomesh/buffer.hpp>

#include <cstdint>
#include <string>

namespace pubsub {

void fill(riomesh::buffer& b, const std::string& publisher, std::uint64_t seq);
std::uint64_t checksum(const riomesh::buffer& b);
// Where a payload differs from the pattern `fill` gave it, and whose
// pattern (a neighbouring sample's, zeros) lies there instead.
std::string damage(const riomesh::buffer& b, const std::string& publisher, std::uint64_t seq);

}  // namespace pubsub
