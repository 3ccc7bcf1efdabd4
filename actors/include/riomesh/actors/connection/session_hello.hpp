// The messages of a session's start, sent under TLS (handshake.hpp) before
// either side exposes any memory, so everything in them is authenticated:
//   dialer -> acceptor   hello     who it claims to be, its identity block,
//                                  its run (incarnation), its terms
//   acceptor -> dialer   hello     the same, or a refusal with the reason
//   dialer -> acceptor   confirm   or a refusal with the reason
// Then the session starts, both sides having judged the other and each
// told why if not.
//
//   u8 kind (1 hello, 2 refusal, 3 confirm)
//   hello:   u8 flags (1: wants the stream encrypted, 2: an identity
//            follows, 4: fetches buffers its peer lends, by rendezvous), u8 name length (1..64),
//            name, u16 max_buffers, u32 max_body, u64 arena_size, u64 incarnation (random per run),
//            u32 silence limit (ms after which the sender declares a silent
//            peer lost; 0: never), [identity: u32 process id, 20 bytes host
//            id (the CAF node id its actor handles carry), u16 listen port,
//            u8 host length, host (empty: the address it connects from)]
//   refusal: u16 length (at most 1024), text
#pragma once

#include <riomesh/actors/peers/node_identity.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

struct session_terms {
  std::uint64_t arena_size = 0;
  std::uint32_t max_body = 0;
  std::uint16_t max_buffers = 0;
  std::uint64_t incarnation = 0;
  std::uint32_t silence_limit_ms = 0;
  // Buffers beyond the arena it assembles (channel.max_streamed and
  // max_streams): a sender refuses larger ones itself, as too_large.
  std::uint64_t max_streamed = 0;
  std::uint32_t max_streams = 0;
  // The arena's first size, where it is sized by demand (arena_sizing.hpp)
  // up to arena_size; 0: it is arena_size, fixed.
  std::uint64_t arena_first = 0;
  // It fetches buffers the sender lends (envelope::lent) instead of
  // having them placed in its arena: a sender may lend it large ones.
  bool fetches_lent = false;
  node_identity identity;  // not valid() if the peer sent none (a tool, not a node)
};

struct session_hello {
  std::string name;
  session_terms terms;
  bool encrypt = false;  // wants the rest of the stream encrypted
};

std::vector<unsigned char> encode_hello(const session_hello& h);
// wrong_node: this node is not the one the dialer meant (its own kind, so
// that the dialer can fail what waits for that node at once).
std::vector<unsigned char> encode_refusal(const std::string& why, bool wrong_node = false);
std::vector<unsigned char> encode_confirm();

// One of them, read back; `error` names what was malformed.
struct session_message {
  enum class kind { hello, refusal, confirm, malformed } what = kind::malformed;
  session_hello hello;
  std::string text;         // the refusal's reason (printable), or what was malformed
  bool wrong_node = false;  // a refusal: not the node the dialer meant
};
session_message decode_session_message(const std::vector<unsigned char>& bytes);

// A listen host a peer may name: an address or a DNS name, no more.
bool is_listen_host(const std::string& host);

}  // namespace riomesh::actors
