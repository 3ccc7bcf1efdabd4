// How the owner of a channel makes it progress: the fd it sleeps on, the
// busy polls before that, arming the wake-up, and timers. The I/O loop
// and the waits of tools and tests use this half of a channel; the stream
// and the placements are the rest (channel.hpp, iomap_access.hpp).
#pragma once

#include <chrono>

namespace riomesh::channels {

class channel_progress {
 public:
  virtual ~channel_progress() = default;

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
  // Whether events wait to be taken: those wait_fd() will not signal
  // (uncorking, tcp's write, can finish iowrites, whose iowrite_done the
  // owner must take in before it sleeps), and those a send raised, which
  // the owner takes in another round before it leaves the channel.
  virtual bool has_events() const { return false; }
};

}  // namespace riomesh::channels
