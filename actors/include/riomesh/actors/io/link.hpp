// One connection to a peer as the I/O thread drives it: the channel, the
// session setup, then the connection core, with senders' messages coming
// in through an outbox and what arrives going out to a link_events
// observer. No actor stands in between: the thread that polls the channel
// decodes, and the sender's own thread enqueues.
//
// Thread rules: submit(), depth(), id(), peer facts once established, and
// request_*() may be called from any thread; everything else runs on the
// I/O thread (io_loop), which alone touches the channel.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/connection/connection_params.hpp>
#include <riomesh/actors/connection/refusal_meter.hpp>
#include <riomesh/actors/connection/session_setup.hpp>
#include <riomesh/actors/io/outbox.hpp>
#include <riomesh/channels/memory/memory_region.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace riomesh::actors {

class io_loop;
class link;

// What a link reports, on the I/O thread.
class link_events {
 public:
  virtual ~link_events() = default;
  // The session is set up: peer_name() and the peer's facts are known.
  virtual void established(link& l) = 0;
  // A message from the peer, in the order it sent them.
  virtual void inbound(link& l, inbound_message& m) = 0;
  // A send was refused as congested since, and the queue has drained to half.
  virtual void writable(link& l) = 0;
  // The link is over (once); `stopped`: the peer ended it in order.
  virtual void closed(link& l, const std::string& reason, bool stopped) = 0;
};

class link : public std::enable_shared_from_this<link> {
 public:
  using clock = std::chrono::steady_clock;
  enum class submitted { queued, congested, closed, stopping };

  // `events` is held weakly: a link that outlives its observer reports to
  // nobody.
  link(std::uint64_t id, std::shared_ptr<channels::channel> ch, const connection_params& p,
       io_loop& loop, const std::shared_ptr<link_events>& events);
  ~link();
  link(const link&) = delete;
  link& operator=(const link&) = delete;

  // ---- any thread --------------------------------------------------------
  std::uint64_t id() const { return id_; }
  bool dialed() const { return params_.dialed; }
  // A message for the peer; the I/O thread sends it in order after those
  // submitted before it (from any thread: per sender, in its order).
  submitted submit(outbound_message&& m);
  std::size_t depth() const { return outbox_.depth(); }
  // Set once established (read them after link_events::established).
  const std::string& peer_name() const { return peer_name_; }
  bool authenticated() const { return authenticated_; }
  // The peer proved a key this node's admins list: it may control the node.
  bool admin() const { return admin_; }
  bool replaces() const { return replaces_; }
  std::uint64_t peer_incarnation() const { return peer_incarnation_; }
  const session_terms& peer_terms() const { return peer_terms_; }
  // "peer 10.0.0.2:4242", for messages.
  const std::string& where() const { return where_; }
  // "10.0.0.2:4242": the address the connection comes from.
  const std::string& remote() const { return ch_->peer(); }

  // ---- the I/O thread ------------------------------------------------------
  int wait_fd() const { return ch_->wait_fd(); }
  bool wants_write() const { return ch_->wants_write(); }
  bool cheap_polls() const { return ch_->polls_without_syscalls(); }
  // Starts the session setup (the greeting goes out).
  void start(clock::time_point now);
  // The channel has something (or may have, when `busy_poll`): take it in,
  // send what waits, deliver what arrived. True if anything moved.
  bool on_io(clock::time_point now, bool busy_poll = false, bool polled = false);
  // The outbox or a release rang the doorbell.
  bool on_wake(clock::time_point now) { return on_io(now, true); }
  // A spin of the thread over a link that polls cheaply (cheap_polls()):
  // it runs its rounds only if the channel found something or the outbox
  // holds some; true if anything moved.
  bool poll(clock::time_point now);
  // Timers: keepalive and peer timeout, setup limit, release batches.
  void on_timer(clock::time_point now);
  clock::time_point next_deadline() const { return next_deadline_; }
  // Before the thread sleeps: the channel must signal its fd.
  // True if arming took anything in: then serve it before sleeping.
  bool arm() { return ch_->arm(); }
  bool finished() const { return closed_; }

  // Ends the link: in setup, with `reason` (an eviction); established,
  // draining first what is queued, with a farewell (stop). `done` runs on
  // the I/O thread once closed.
  void evict(const std::string& reason);
  void drain(std::function<void()> done);
  // Ends it now, without a word (the node keeps another link to the peer).
  void drop(const std::string& reason);
  // Ends an established session the peer abused, telling it in band.
  void cut(const std::string& reason) { leave(reason); }
  // How many of the peer's messages were refused, and what that calls for.
  refusal_meter& refusals() { return refusals_; }
  // Maps `b` for the peer: the offset, or the error text. `access`
  // (channels::map_access) beyond write needs reads_one_sided(). A map
  // without write access gets an offset from read_maps_from on, so the
  // peer knows by its offset not to write there (doing so would fail its
  // connection: rdma refuses the write as a remote access error).
  static constexpr std::uint64_t read_maps_from = std::uint64_t{1} << 62;
  bool expose(buffer b, std::uint64_t& offset, std::string& error,
              std::uint8_t access = channels::map_access::write);
  // The peer may read our maps and run atomics on them one-sided, and we
  // theirs (channel::reads_one_sided).
  bool reads_one_sided() const { return ch_->reads_one_sided(); }
  bool unexpose(std::uint64_t offset);
  connection_core::counters stats() const;

 private:
  void become_connected();
  void serve_outbox();
  void leave(std::string reason);
  void close(const std::string& reason, bool stopped);
  void fail_queued(std::deque<outbound_message>& msgs, send_failure why, const std::string& detail);
  void plan(clock::time_point now);

  std::uint64_t id_;
  std::shared_ptr<channels::channel> ch_;
  connection_params params_;
  io_loop& loop_;
  std::weak_ptr<link_events> events_;
  std::string where_;
  outbox outbox_;
  std::uint64_t ticket_ = 0;  // in params_.sessions

  // Set once on the I/O thread before established() is reported, read by
  // others after it (the report is their synchronization).
  std::string peer_name_;
  bool authenticated_ = false, admin_ = false, replaces_ = false;
  std::uint64_t peer_incarnation_ = 0;
  session_terms peer_terms_;

  std::unique_ptr<session_setup> setup_;
  std::shared_ptr<channels::memory_region> arena_;    // views of it hold it too
  std::shared_ptr<channels::memory_region> staging_;  // where a dma-buf arena is placed
  std::unique_ptr<connection_core> core_;
  std::deque<outbound_message> incoming_;  // taken from the outbox, for the core
  std::map<std::uint64_t, buffer> exposed_;
  // Where the next map goes in the peer's view: offsets are never reused
  // on a connection, so a write late for a map taken down cannot land in
  // another map made since over the same memory.
  std::uint64_t next_map_ = std::uint64_t{1} << 40;
  std::uint64_t next_read_map_ = read_maps_from;
  std::vector<inbound_message> arrived_;
  refusal_meter refusals_;

  bool closed_ = false;
  std::atomic<bool> stopping_{false};  // drain() was asked: refuse new sends
  bool draining_ = false, farewell_ = false, shut_ = false;
  std::function<void()> drained_;
  std::optional<std::string> leaving_;
  clock::time_point leave_by_, setup_deadline_, next_tick_, next_deadline_;
};

}  // namespace riomesh::actors
