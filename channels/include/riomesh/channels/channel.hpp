// The channel contract: what a connection actor sees of a connection to one
// peer, whatever carries it (rsocket engine over verbs, or framed TCP).
//
// Every call returns at once. Progress happens in progress(), which the
// owner calls when wait_fd() is readable (or writable, if wants_write()).
// Events report what changed: stream bytes readable, an iowrite's source
// free again, a peer map announced, writable again, closed with a reason.
// Its placements (maps and iowrites) are its iomap_access half; how its
// owner makes it progress (waits, polls, timers), its channel_progress half.
#pragma once

#include <riomesh/channels/channel_progress.hpp>
#include <riomesh/channels/iomap_access.hpp>
#include <riomesh/channels/stream_guard.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace riomesh::channels {

using engine::shutdown_how;

class channel : public iomap_access, public channel_progress {
 public:
  virtual ~channel() = default;

  // Stream bytes; the caller's buffer is free when the call returns.
  virtual io_result send(const void* data, std::size_t length) = 0;
  virtual io_result recv(void* out, std::size_t length) = 0;
  // The oldest unread stream bytes in place, then consume(n) of them.
  virtual std::pair<const unsigned char*, std::size_t> peek() = 0;
  virtual void consume(std::size_t n) = 0;

  // The gate and encryption of a stream the peer places through
  // (stream_guard.hpp); null where the fabric has none.
  virtual stream_guard* guard() { return nullptr; }

  virtual status shutdown(shutdown_how how) = 0;
  // Corked, send() and iowrite() may queue what they write instead of
  // making a system call (tcp) or a post (rdma) each; uncorking writes out
  // everything queued at once. An owner that makes many calls per wake
  // corks around them: a burst of small messages then leaves as one
  // sendmsg (or one chain of work requests) and arrives as one read.
  virtual void cork(bool /*on*/) {}
  // Everything given to send() and iowrite() has left this side (written to
  // the socket, or its writes completed). Wait for it before dropping a
  // channel after shutdown, or the last bytes go with it.
  virtual bool drained() const = 0;
  // After shutdown, whether the peer must acknowledge our end before the
  // channel is dropped (rdma: an rsocket peer ignores the connection
  // manager and would wait forever), or whether leaving once drained()
  // already ends the stream in order (tcp: the socket's end of stream).
  virtual bool awaits_peer_on_close() const { return false; }

  virtual bool take_events(std::vector<event>& out) = 0;
  virtual bool closed() const = 0;
  // Closed by a failure (not an orderly end): poll reports an error.
  virtual bool failed() const { return closed(); }
  virtual const std::string& reason() const = 0;
  virtual const std::string& peer() const = 0;
};

}  // namespace riomesh::channels
