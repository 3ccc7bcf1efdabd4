// The start of every riomesh connection, before any arena is exposed: the
// handshake (handshake.hpp) over the channel's stream, the acceptor's
// policy on unauthenticated peers, then each side's terms (its arena size,
// what one envelope may hold, its incarnation), from which the connection
// core is built. The acceptor sends its terms only once it has the
// dialer's and has asked whether this session may be the one to the
// dialer's name (session_registry.hpp); a refusal travels in its terms, so
// both sides end the session alike. Driven by pump() like the core; the
// owner bounds it in time. Once established it authorizes the channel
// (channel.hpp: the gate).
//
//   terms (32 bytes, little-endian): u32 magic "RMTM", u16 max_buffers,
//   u16 flags (1: refused, from the acceptor; 2: an identity follows), u32
//   max_body, u64 arena_size, u64 incarnation (random per start of a node),
//   u32 silence limit (ms after which the sender declares a silent peer
//   lost; 0: never), so the peer keeps it alive often enough whatever its
//   own settings
//   identity (after flag 2): u16 length of the rest, u32 process id, 20
//   bytes host id (the node's CAF node id: what actor handles carry), u16
//   listen port, u8 host length, host (empty: the address this connection
//   comes from): where a third node may dial it
#pragma once

#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/handshake/handshake.hpp>
#include <riomesh/channels/channel.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::actors {

// A node as actor handles name it (CAF's node id: a host id and a process
// id), and where it listens.
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

struct session_terms {
  std::uint64_t arena_size = 0;
  std::uint32_t max_body = 0;
  std::uint16_t max_buffers = 0;
  std::uint64_t incarnation = 0;
  std::uint32_t silence_limit_ms = 0;
  node_identity identity;  // not valid() if the peer sent none
};

class session_setup {
 public:
  using claim_fn = std::function<session_registry::answer(const session_registry::claim&)>;

  // `allow_unauthenticated`: accept a peer when neither side proves
  // anything (loopback, or insecure: true in the config). `claim`: asked on
  // the accepting side; empty grants every session (the dialing side).
  session_setup(channels::channel& ch, handshake hs, const session_terms& mine,
                bool allow_unauthenticated, claim_fn claim = {});

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
  // The acceptor's verdict on this session (granted on the dialing side).
  session_registry::verdict verdict() const { return verdict_; }

 private:
  bool flush();
  void fail(const std::string& why);
  // How many bytes the peer's terms take, from what arrived of them (0: not
  // known yet); terms beyond the bound are a protocol error.
  std::size_t terms_length() const;
  void on_terms(const unsigned char* p, std::size_t n);
  void send_terms(bool refused);

  channels::channel& ch_;
  handshake hs_;
  session_terms mine_;
  bool allow_unauthenticated_;
  claim_fn claim_;
  bool terms_sent_ = false;
  bool authorized_ = false;  // the channel told: the peer may map and place
  session_registry::verdict verdict_ = session_registry::verdict::granted;
  std::string refusal_;  // ours, failed with once it is sent
  std::vector<unsigned char> out_;
  std::size_t out_pos_ = 0;
  std::vector<unsigned char> terms_in_;
  unsigned char probe_ = 0;  // a byte read while looking for the end of stream
  std::optional<session_terms> peer_terms_;
  std::string reason_;
};

}  // namespace riomesh::actors
