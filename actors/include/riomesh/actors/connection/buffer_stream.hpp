// A buffer larger than the peer's arena cannot be placed whole: it streams
// through the arena in pieces and arrives as one buffer. The sender sends
// each piece but the last as a piece envelope (one descriptor; body: the
// buffer's index in the coming message, and its total size), then the
// message itself with the last piece where the buffer would be. The
// receiver copies pieces into one heap buffer as they land (giving their
// arena space straight back), and completes it with the message. This is
// the one path where a placed buffer is copied: into its final place.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace riomesh::actors {

// The message, or its pieces then the message if a buffer exceeds
// `peer_arena` (pieces of `piece_size` bytes).
std::vector<outbound_message> split_for_arena(outbound_message&& m, std::uint64_t peer_arena,
                                              std::uint64_t piece_size);

class stream_assembly {
 public:
  // What may be in assembly at once: the streams' declared sizes together,
  // and their number. A lying peer must not make us allocate at will.
  struct limits {
    std::uint64_t bytes = 4ull << 30;
    std::uint32_t streams = 8;
  };
  explicit stream_assembly(const limits& l) : limits_(l) {}

  // A piece envelope and its placed view; false with `error` if it lies.
  bool add_piece(const envelope& e, const buffer& piece, std::string& error);
  // The message that ends the streams so far: each streamed buffer's view
  // (its last piece) becomes the whole buffer. False with `error` if a
  // stream does not end here, or ends at the wrong size.
  bool complete(const envelope& e, std::vector<buffer>& placed, std::string& error);
  bool idle() const { return streams_.empty(); }
  std::uint64_t copied() const { return copied_; }  // bytes assembled so far

 private:
  struct stream {
    buffer whole;
    std::uint64_t filled = 0;
  };
  limits limits_;
  std::uint64_t declared_ = 0;  // the sizes of the streams in assembly
  std::uint64_t copied_ = 0;
  std::map<std::uint32_t, stream> streams_;  // by buffer index in the message
};

namespace wire_piece {
constexpr std::size_t body_size = 12;  // u32 index, u64 total
}

}  // namespace riomesh::actors
