// The start of every riomesh connection, before any arena is exposed: the
// handshake (handshake.hpp) over the channel's stream, the acceptor's
// policy on unauthenticated peers, then each side's terms (its arena size
// and what one envelope may hold), from which the connection core is built.
// Driven by pump() like the core; the owner bounds it in time. Once
// established it authorizes the channel (channel.hpp: the gate).
#pragma once

#include <riomesh/actors/handshake/handshake.hpp>
#include <riomesh/channels/channel.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

struct session_terms {
  std::uint64_t arena_size = 0;
  std::uint32_t max_body = 0;
  std::uint16_t max_buffers = 0;
};

class session_setup {
 public:
  // `allow_unauthenticated`: accept a peer when neither side has a secret
  // (loopback, or insecure: true in the config).
  session_setup(channels::channel& ch, handshake hs, const session_terms& mine,
                bool allow_unauthenticated);

  // Sends and reads what it can; true if anything moved.
  bool pump();
  // Both sides' terms through, ours sent: the stream is the core's now.
  bool established() const {
    return peer_terms_.has_value() && terms_sent_ && out_.empty() && reason_.empty();
  }
  bool failed() const { return !reason_.empty(); }
  const std::string& reason() const { return reason_; }
  const std::string& peer_name() const { return hs_.peer_name(); }
  bool authenticated() const { return hs_.current() == handshake::state::authenticated; }
  const session_terms& peer_terms() const { return *peer_terms_; }

 private:
  bool flush();
  void fail(const std::string& why);
  void on_terms(const unsigned char* p);

  channels::channel& ch_;
  handshake hs_;
  session_terms mine_;
  bool allow_unauthenticated_;
  bool terms_sent_ = false;
  bool authorized_ = false;  // the channel told: the peer may map and place
  std::vector<unsigned char> out_;
  std::size_t out_pos_ = 0;
  std::vector<unsigned char> terms_in_;
  unsigned char probe_ = 0;  // a byte read while looking for the end of stream
  std::optional<session_terms> peer_terms_;
  std::string reason_;
};

}  // namespace riomesh::actors
