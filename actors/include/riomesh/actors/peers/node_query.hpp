// The bodies of a node query and its answer. A message may carry handles
// of actors on nodes this node has never heard of; it then asks the peer
// that sent it who those nodes are (node_query: their node ids), and the
// peer answers each in order (node_info): unknown, or the node's name and
// where it listens. Peer-supplied bytes, parsed here alone and bounded.
//   query:  per node id: u32 process id, 20 bytes host id
//   answer: per node id: u8 known; if known: u8 length, name,
//           u8 length, host, u16 port
#pragma once

#include <riomesh/actors/peers/node_table.hpp>
#include <riomesh/config/settings.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

constexpr std::size_t max_node_query = 256;  // node ids per query

// At most max_node_query of `keys`, the first.
std::vector<unsigned char> encode_node_query(const std::vector<node_table::key>& keys);
// The node ids asked, at most max_node_query; a trailing partial id is
// ignored.
std::vector<node_table::key> decode_node_query(const std::vector<unsigned char>& body);

// One node's answer: null if the peer does not know it. Names and hosts
// longer than 255 bytes are cut there.
void append_node_answer(std::vector<unsigned char>& out, const std::optional<node_table::node>& n);

struct node_answer {
  bool known = false;
  std::string name;  // as the peer wrote it: the caller checks it
  config::endpoint where;
};
// Exactly `asked` answers, or nothing with `error` saying where the body
// went wrong (short, or bytes left over).
std::optional<std::vector<node_answer>> decode_node_info(const std::vector<unsigned char>& body,
                                                         std::size_t asked, std::string& error);

}  // namespace riomesh::actors
