// The channel contract: what a connection actor sees of a connection to one
// peer, whatever carries it (rsocket engine over verbs, or framed TCP).
//
// Every call returns at once. Progress happens in progress(), which the
// owner calls when wait_fd() is readable (or writable, if wants_write()).
// Events report what changed: stream bytes readable, an iowrite's source
// free again, a peer map announced, writable again, closed with a reason.
// Its placements (maps and iowrites) are its iomap_access half.
#pragma once

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

class channel : public iomap_access {
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

  virtual int wait_fd() const = 0;
  virtual bool wants_write() const = 0;
  virtual void progress() = 0;
  // One busy-poll step: takes in what the fabric already has, as cheaply as
  // it can (rdma: polls the completion queue, no system call); true if it
  // may have found anything. A waiter spins on it for polling_time, then
  // calls arm() before sleeping on wait_fd(), and progress() after.
  virtual bool busy_poll() {
    progress();
    return true;
  }
  // Makes wait_fd() signal the next change, taking in only what arming
  // requires (rdma: a system call only if not armed already; tcp: nothing,
  // the socket signals by itself). For callers that return "would block"
  // and expect to be woken through wait_fd(). True if it took anything in:
  // then look at the channel again before sleeping.
  virtual bool arm() { return false; }
  // Whether busy_poll() costs no system call (rdma: it polls the
  // completion queue in user space): a poller may call it at will.
  virtual bool polls_without_syscalls() const { return false; }
  // The owner is the node's progress thread: it busy-polls the channel
  // after each of its wake-ups and takes the signals of what the channel
  // shares with the node's other connections itself (rdma: the shared
  // completion queue's), so the channel need not make wait_fd() readable
  // for what arrives through those.
  virtual void on_progress_thread() {}
  // Timers, with the time passed in: a keepalive when the connection has
  // been idle, and the peer declared lost when it stays silent (tcp: after
  // peer_timeout; rdma: when the transport gives up on a keepalive). The
  // owner calls it now and then, a few times per keepalive interval.
  virtual void tick(std::chrono::steady_clock::time_point /*now*/) {}
  // The peer declares us lost after `silence` without a word: keep the
  // connection alive often enough for it (tcp: keepalives at least three
  // times as often; rdma: the transport itself answers, nothing to do, and
  // a peer whose process hangs while its NIC answers is not noticed: it
  // keeps its session until it dies).
  virtual void keep_alive_within(std::chrono::nanoseconds /*silence*/) {}
  virtual bool take_events(std::vector<event>& out) = 0;
  // Whether events wait that wait_fd() will not signal: uncorking (tcp: its
  // write) can finish iowrites, whose iowrite_done the owner must take in
  // before it sleeps. (rdma: none; its completions are polled.)
  virtual bool has_events() const { return false; }

  virtual bool closed() const = 0;
  // Closed by a failure (not an orderly end): poll reports an error.
  virtual bool failed() const { return closed(); }
  virtual const std::string& reason() const = 0;
  virtual const std::string& peer() const = 0;
};

}  // namespace riomesh::channels
