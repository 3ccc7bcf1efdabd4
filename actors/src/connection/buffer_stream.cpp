#include <riomesh/actors/connection/buffer_stream.hpp>
#include <riomesh/channels/wire/byte_order.hpp>

#include <cstring>

namespace riomesh::actors {

std::vector<outbound_message> split_for_arena(outbound_message&& m, std::uint64_t peer_arena,
                                              std::uint64_t piece_size) {
  std::vector<outbound_message> out;
  for (std::size_t i = 0; i < m.placed.size(); ++i) {
    auto& b = m.placed[i];
    if (b.size() <= peer_arena)
      continue;
    std::uint64_t at = 0;
    while (b.size() - at > piece_size) {
      outbound_message p;
      p.env.kind = envelope_kind::piece;
      p.env.sender = m.env.sender;
      p.env.receiver = m.env.receiver;
      wire::append_le<std::uint32_t>(p.env.body, static_cast<std::uint32_t>(i));
      wire::append_le<std::uint64_t>(p.env.body, b.size());
      p.placed.push_back(b.slice(at, piece_size));
      out.push_back(std::move(p));
      at += piece_size;
    }
    b = b.slice(at, b.size() - at);  // the last piece rides with the message
  }
  out.push_back(std::move(m));
  return out;
}

bool stream_assembly::add_piece(const envelope& e, const buffer& piece, std::string& error) {
  if (e.body.size() != wire_piece::body_size || e.buffers.size() != 1) {
    error = "a piece has one buffer and a 12-byte body";
    return false;
  }
  auto index = wire::load_le<std::uint32_t>(e.body.data());
  auto total = wire::load_le<std::uint64_t>(e.body.data() + 4);
  auto& s = streams_[index];
  if (s.whole.empty()) {
    if (total == 0 || total > limits_.bytes - declared_) {
      error = "a streamed buffer of " + std::to_string(total) + " bytes, with " +
              std::to_string(declared_) + " already in assembly (at most " +
              std::to_string(limits_.bytes) + " at once: channel.max_streamed)";
      streams_.erase(index);
      return false;
    }
    if (streams_.size() > limits_.streams) {
      error = "buffer " + std::to_string(index) + ": more than " + std::to_string(limits_.streams) +
              " buffers streaming at once (channel.max_streams)";
      streams_.erase(index);
      return false;
    }
    declared_ += total;
    s.whole = buffer::heap(total);
  } else if (s.whole.size() != total) {
    error = "buffer " + std::to_string(index) + " changed its size mid-stream";
    return false;
  }
  // The last piece comes with the message: a piece never fills the buffer.
  if (piece.size() >= total - s.filled) {
    error = "buffer " + std::to_string(index) + ": a piece overruns its total of " +
            std::to_string(total) + " bytes";
    return false;
  }
  std::memcpy(s.whole.data() + s.filled, piece.data(), piece.size());
  s.filled += piece.size();
  copied_ += piece.size();
  return true;
}

bool stream_assembly::complete(const envelope& e, std::vector<buffer>& placed, std::string& error) {
  for (auto& [index, s] : streams_) {
    if (index >= placed.size()) {
      error = "buffer " + std::to_string(index) + " was streamed, but the " + to_string(e.kind) +
              " has " + std::to_string(placed.size()) + " buffers";
      streams_.clear();
      declared_ = 0;
      return false;
    }
    auto& tail = placed[index];
    if (s.filled + tail.size() != s.whole.size()) {
      error = "buffer " + std::to_string(index) + " ends at " +
              std::to_string(s.filled + tail.size()) + " of its " + std::to_string(s.whole.size()) +
              " bytes";
      streams_.clear();
      declared_ = 0;
      return false;
    }
    std::memcpy(s.whole.data() + s.filled, tail.data(), tail.size());
    copied_ += tail.size();
    tail = std::move(s.whole);  // the arena view drops: its space goes back
  }
  streams_.clear();
  declared_ = 0;
  return true;
}

}  // namespace riomesh::actors
