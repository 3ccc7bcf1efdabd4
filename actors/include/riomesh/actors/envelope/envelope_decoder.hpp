// Reassembles envelopes from a channel's stream, which delivers bytes in
// whatever pieces it likes, and checks each one against what this node
// offered before anything acts on it: a peer's envelope may lie. Any
// violation stops the decoder with a reason naming the envelope (its
// number on this connection) and what was wrong; the connection then
// closes, and nothing of the bad envelope was delivered.
#pragma once

#include <riomesh/actors/envelope/envelope.hpp>

#include <optional>
#include <string>

namespace riomesh::actors {

struct envelope_limits {
  std::uint64_t arena_size = 0;       // buffers must lie within [0, arena_size): ours
  std::uint64_t peer_arena_size = 0;  // released ranges: the peer's arena, where we placed
  std::uint32_t max_body = 1u << 20;  // inline bytes per envelope
  std::uint16_t max_buffers = 256;    // descriptors per envelope
  // Lent buffers (envelope::lent) are accepted: this node fetches them.
  bool accepts_lent = false;
};

class envelope_decoder {
 public:
  explicit envelope_decoder(const envelope_limits& l) : limits_(l) {}

  // Takes up to n bytes; returns how many it used. It stops after the end
  // of a whole envelope (take it with next()) or at an error.
  std::size_t feed(const unsigned char* p, std::size_t n);
  // The envelope completed by the last feed(), if any.
  std::optional<envelope> next();

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  std::uint64_t decoded() const { return count_; }
  // Mid-envelope: the stream ending here would cut it short.
  bool partial() const { return have_ > 0 || stage_ != stage::header; }

 private:
  enum class stage { header, descriptors, body };
  bool check_header();
  bool check_descriptor(const arena_ref& r, std::size_t index);
  bool check_overlaps();
  bool fail(const std::string& why);

  envelope_limits limits_;
  stage stage_ = stage::header;
  unsigned char buf_[wire_envelope::header_size];
  std::size_t have_ = 0;  // bytes of the current header or descriptor in buf_
  std::uint16_t buffers_left_ = 0;
  std::uint32_t body_left_ = 0;
  envelope current_;
  std::optional<envelope> done_;
  std::uint64_t count_ = 0;
  std::string error_;
};

}  // namespace riomesh::actors
