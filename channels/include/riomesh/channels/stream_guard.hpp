// What guards a channel whose peer writes into our memory through the
// stream itself (tcp: channel::guard()): a gate until the session has
// authenticated the peer, and encryption of the rest of the stream. On
// rdma the peer can place bytes only into slots we sized and mapped, by
// RDMA write, which no TLS record covers: neither applies.
#pragma once

#include <string>

struct ssl_st;  // OpenSSL's TLS connection

namespace riomesh::channels {

class stream_guard {
 public:
  // A riomesh node's channel is gated (channel_options::gated): until the
  // session above has authenticated the peer, the peer may send stream
  // bytes only. authorize() opens the rest; held_frame() describes what
  // the peer sent too early, waiting for authorize() (empty: nothing).
  virtual void authorize() = 0;
  virtual std::string held_frame() const = 0;
  // Encryption of the rest of the stream under the TLS session that
  // authenticated the peer. secure() takes the TLS connection (an OpenSSL
  // SSL*) on success; each side calls it once its last message in the
  // clear is sent, and from then on everything it sends, placements
  // included, goes in TLS records.
  virtual bool secure(ssl_st* tls, std::string& error) = 0;
  virtual bool encrypted() const = 0;

 protected:
  ~stream_guard() = default;
};

}  // namespace riomesh::channels
