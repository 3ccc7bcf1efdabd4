// A socket-like handle on one channel, for programs without actors: the
// calls of librdmacm's rsocket API (send, recv, riomap, riounmap, riowrite,
// shutdown, close), blocking or not, with a pollable fd. Over verbs with
// channel_options::plain_rsocket it is a wire-compatible peer of a real
// rsocket; over tcp it offers the same calls to a riomesh peer.
//
// Blocking calls wait as a progress thread does (wait.hpp): busy-poll for
// polling_time, then sleep on the fd. Every one returns as soon as the
// connection ends, with status closed (reason() says why). Non-blocking calls return at once
// with status would_block and what they did, having looked at the fabric
// once (a caller may spin on them, as on rsockets); poll() tells when to
// retry, and so does fd() (then call poll()).
#pragma once

#include <riomesh/channels/channel.hpp>
#include <riomesh/channels/listener.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace riomesh::channels {

// What poll() reports, as bits, as poll(2) does for a socket: poll_in also
// at end of stream (a read returns at once); poll_hup once the connection
// has ended in order, poll_err once it failed; poll_closed with either.
enum poll_bits : unsigned {
  poll_in = 1,
  poll_out = 2,
  poll_closed = 4,
  poll_hup = 8,
  poll_err = 16
};

class raw_socket {
 public:
  raw_socket(std::unique_ptr<channel> ch, std::chrono::nanoseconds polling_time);
  ~raw_socket();
  raw_socket(const raw_socket&) = delete;
  raw_socket& operator=(const raw_socket&) = delete;

  static std::unique_ptr<raw_socket> connect(const config::endpoint& to, const channel_options& opt,
                                             std::string& error);
  static std::unique_ptr<raw_socket> accept(listener& l, std::chrono::milliseconds timeout,
                                            const channel_options& opt, std::string& error);

  void set_blocking(bool on) { blocking_ = on; }
  bool blocking() const { return blocking_; }
  // Blocking calls give up after this (status would_block); none by default.
  void set_timeout(std::optional<std::chrono::milliseconds> t) { timeout_ = t; }

  // Blocking: all of it, unless the connection ends first.
  io_result send(const void* data, std::size_t length);
  // Blocking: at least one byte, or eof / closed.
  io_result recv(void* out, std::size_t length);

  // Exposes [base, base + length) to the peer's riowrite at `offset`
  // (default: the address); the peer learns of it with its next message.
  map_result riomap(void* base, std::size_t length,
                    std::optional<std::uint64_t> offset = std::nullopt);
  status riounmap(std::uint64_t offset);
  // Places bytes at the peer's mapped `offset`, ahead of later stream bytes.
  // As with rsockets, `data` is free when the call returns: blocking waits
  // for the write to complete; non-blocking copies what it accepted.
  io_result riowrite(const void* data, std::size_t length, std::uint64_t offset);
  // Zero-copy: `data` stays untouched until iowrite_done(token) is seen
  // (done(token)); register_memory() first to avoid a registration per call.
  io_result iowrite(const void* data, std::size_t length, std::uint64_t offset,
                    std::uint64_t token);
  bool done(std::uint64_t token) const { return !pending_.count(token); }
  // Keeps [base, base + length) registered for iowrite() sources until
  // deregister_memory(base); the caller keeps the memory alive until then.
  bool register_memory(const void* base, std::size_t length);
  void deregister_memory(const void* base);

  status shutdown(shutdown_how how);
  // Shuts both directions down, waits (up to `linger`) until everything
  // sent has left, then releases the connection.
  void close(std::chrono::milliseconds linger = std::chrono::seconds(5));

  // Readable when something may have changed: then call poll().
  int fd() const { return ch_->wait_fd(); }
  // What of `interest` (poll_bits) holds now, waiting up to `timeout` for
  // any of it (0: just look; nullopt: forever). poll_closed always reported.
  unsigned poll(unsigned interest, std::optional<std::chrono::milliseconds> timeout);

  bool closed() const { return ch_->closed(); }
  const std::string& reason() const { return ch_->reason(); }
  const std::string& peer() const { return ch_->peer(); }
  channel& raw() { return *ch_; }

 private:
  // Takes the channel's events; true if any.
  bool take_events();
  unsigned ready(unsigned interest);
  // Waits until `done()`, honouring blocking mode and timeout; false if it
  // gave up.
  bool wait(const std::function<bool()>& done);
  // Non-blocking: one more try after taking in what the fabric already has
  // (no system call on rdma), then arms fd() if it still would block.
  bool retry_once(const std::function<bool()>& done);

  std::unique_ptr<channel> ch_;
  std::map<const void*, std::uint64_t> pins_;  // register_memory(), by base
  std::chrono::nanoseconds polling_time_;
  bool blocking_ = true;
  std::optional<std::chrono::milliseconds> timeout_;
  bool writable_ = true;  // until a call would block, then until a writable event
  std::vector<event> events_;
  // iowrite tokens not yet done, with how many calls each still waits for
  std::map<std::uint64_t, std::size_t> pending_;
  // riowrite's copies in non-blocking mode, freed at their iowrite_done
  std::map<std::uint64_t, std::vector<unsigned char>> copies_;
  std::uint64_t next_token_ = 1ull << 63;  // riowrite's own tokens
};

}  // namespace riomesh::channels
