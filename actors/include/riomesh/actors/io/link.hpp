// One connection to a peer as the I/O thread drives it: the channel, the
// session setup, then the connection core, with what arrives going out to
// a link_events observer. Its actor (io/connection_actor.hpp) is how the
// rest of the node reaches it: senders' messages come in through the
// actor's mailbox, and other actors ask it for its figures or tell it to
// drain or close. The thread that polls the channel decodes; the sender's
// own thread enqueues.
//
// Its life is one phase: setting up, up, then either draining (what is
// queued goes, then a farewell, then the write side shuts) or leaving
// (the peer is told in band and given a moment), and closed.
//
// Thread rules: submit(), depth(), id(), current_phase(), peer facts once
// established, and the facts of the channel may be read from any thread;
// everything else runs on the I/O thread (io_loop and the actor), which
// alone touches the channel.
#pragma once

#include <riomesh/actors/connection/connection_core.hpp>
#include <riomesh/actors/connection/connection_params.hpp>
#include <riomesh/actors/connection/refusal_meter.hpp>
#include <riomesh/actors/connection/session_drive.hpp>
#include <riomesh/channels/memory/memory_region.hpp>

#include <caf/actor_control_block.hpp>
#include <caf/node_id.hpp>
#include <caf/weak_intrusive_ptr.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
  enum class phase : std::uint8_t {
    setting_up,  // the session setup runs; no core yet
    up,          // messages flow
    draining,    // asked to stop: what is queued goes, then the farewell
    farewell,    // said; the write side shuts once the channel drained
    shut,        // our side is done; reading until the peer ends its own
    leaving,     // ending: the peer was told in band and has a moment to read it
    closed,
  };

  // `events` is held weakly: a link that outlives its observer reports to
  // nobody.
  link(std::uint64_t id, std::shared_ptr<channels::channel> ch, const connection_params& p,
       io_loop& loop, const std::shared_ptr<link_events>& events);
  ~link();
  link(const link&) = delete;
  link& operator=(const link&) = delete;

  // Its actor: where submit() puts messages, and who hears when the link
  // closed. Once, before the I/O thread adopts the link.
  void bind(const caf::strong_actor_ptr& actor);

  // ---- any thread --------------------------------------------------------
  std::uint64_t id() const { return id_; }
  bool dialed() const { return params_.dialed; }
  phase current_phase() const { return phase_.load(std::memory_order_acquire); }
  // A message for the peer, into the actor's mailbox; the I/O thread sends
  // it in order after those submitted before it (from any thread: per
  // sender, in its order).
  submitted submit(outbound_message&& m);
  // What waits in the mailbox and in the connection (cheap: for refusals
  // and stats), and at most how much may.
  std::size_t depth() const { return pending_.load(std::memory_order_relaxed); }
  std::size_t bound() const { return params_.max_pending; }
  // Set once established (read them after link_events::established).
  const std::string& peer_name() const { return peer_name_; }
  bool authenticated() const { return authenticated_; }
  // The peer proved a key this node's admins list: it may control the node.
  bool admin() const { return admin_; }
  bool replaces() const { return replaces_; }
  // Its setup failed because the peer is not the node meant (set before
  // the link reports its end).
  bool wrong_node() const { return wrong_node_; }
  std::uint64_t peer_incarnation() const { return peer_incarnation_; }
  const session_terms& peer_terms() const { return peer_terms_; }
  // "peer 10.0.0.2:4242", for messages.
  const std::string& where() const { return where_; }
  // "10.0.0.2:4242": the address the connection comes from.
  const std::string& remote() const { return ch_->peer(); }
  bool encrypted() const { return ch_->guard() && ch_->guard()->encrypted(); }

  // ---- the I/O thread ------------------------------------------------------
  // The node id the peer's actor handles carry, once the exchange learned
  // its session (learn_peer): the proxy of each inbound sender needs it,
  // and a lookup by name per message would cost a lock and copies.
  const caf::node_id& peer_node() const { return peer_node_; }
  void peer_node(caf::node_id n) { peer_node_ = std::move(n); }
  // A message submit() queued, as the actor takes it from its mailbox;
  // then how many it took, for the count of what waits.
  void take(outbound_message&& m);
  void took(std::size_t n);
  int wait_fd() const { return ch_->wait_fd(); }
  bool wants_write() const { return ch_->wants_write(); }
  bool cheap_polls() const { return ch_->polls_without_syscalls(); }
  // Starts the session setup (the greeting goes out).
  void start(clock::time_point now);
  // The channel has something (or may have, when `busy_poll`): take it in,
  // send what waits, deliver what arrived. True if anything moved.
  bool on_io(clock::time_point now, bool busy_poll = false, bool polled = false);
  // The actor took messages, or a release rang the doorbell: what is to
  // send goes. The channel is looked at only where that costs no system
  // call (rdma's completion queue); a socket's input is the readiness
  // wake-up's (level-triggered), and a read here would mostly find nothing.
  bool on_wake(clock::time_point now) { return on_io(now, true, !cheap_polls()); }
  // A spin of the thread over a link that polls cheaply (cheap_polls()):
  // it runs its rounds only if the channel found something; true if
  // anything moved.
  bool poll(clock::time_point now);
  // Timers: keepalive and peer timeout, setup limit, release batches.
  void on_timer(clock::time_point now);
  clock::time_point next_deadline() const { return next_deadline_; }
  // Before the thread sleeps: the channel must signal its fd.
  // True if arming took anything in: then serve it before sleeping.
  bool arm() { return ch_->arm(); }
  bool finished() const { return current_phase() == phase::closed; }

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
  // theirs (channel::one_sided).
  bool reads_one_sided() const { return ch_->one_sided() != nullptr; }
  bool unexpose(std::uint64_t offset);
  connection_core::counters stats() const;

 private:
  void become_connected();
  void connected();
  // The receive arena is sized by demand (arena_sizing.hpp): not for
  // device memory, whose buffers are made once per arena.
  bool sized_by_demand() const {
    return params_.arena_min > 0 && params_.arena_min < params_.arena_size &&
           params_.arena_memory.provider != config::memory_provider::dmabuf;
  }
  void serve_taken();
  void submit_to_core(outbound_message&& m);
  // One round of the core: true if anything moved; `ended` if the link
  // closed or started leaving.
  bool core_round(clock::time_point now, bool& ended);
  bool settled(clock::time_point now) const;
  void after_draining(bool& moved, bool& ended);
  void leave(std::string reason);
  void close(const std::string& reason, bool stopped);
  void fail(outbound_message& m, send_failure why, const std::string& detail);
  void plan(clock::time_point now);
  void set_phase(phase p) { phase_.store(p, std::memory_order_release); }
  bool is(phase p) const { return phase_.load(std::memory_order_relaxed) == p; }

  std::uint64_t id_;
  std::shared_ptr<channels::channel> ch_;
  connection_params params_;
  io_loop& loop_;
  std::weak_ptr<link_events> events_;
  std::string where_;
  std::uint64_t ticket_ = 0;  // in params_.sessions
  std::atomic<phase> phase_{phase::setting_up};

  // The actor: senders reach it weakly (a link that outlives it refuses
  // their messages); the I/O thread keeps it until the link closed.
  caf::weak_actor_ptr actor_;
  caf::strong_actor_ptr keep_actor_;
  caf::node_id peer_node_;
  // Messages in the actor's mailbox and held by the link and its core, in
  // one counter so that a sender reads a sum that was true at some instant
  // (two counters read apart showed 1 for 2 on a busy VM); what the I/O
  // thread last counted as held (its own); a refusal as full since the
  // queue last drained to half (the sender hears then).
  std::atomic<std::size_t> pending_{0};
  std::size_t backlog_ = 0;
  bool wake_due_ = false;  // submit() took a message directly; its send is planned
  void set_backlog(std::size_t n);
  std::atomic<bool> refused_{false};

  // Set once on the I/O thread before established() is reported, read by
  // others after it (the report is their synchronization).
  std::string peer_name_;
  bool authenticated_ = false, admin_ = false, replaces_ = false, wrong_node_ = false;
  std::uint64_t peer_incarnation_ = 0;
  session_terms peer_terms_;

  std::unique_ptr<session_setup> setup_;
  std::shared_ptr<channels::memory_region> arena_;    // views of it hold it too
  std::shared_ptr<channels::memory_region> staging_;  // where a dma-buf arena is placed
  std::unique_ptr<connection_core> core_;
  std::vector<outbound_message> taken_;  // from the mailbox, for the core
  std::map<std::uint64_t, buffer> exposed_;
  // Where the next map goes in the peer's view: offsets are never reused
  // on a connection, so a write late for a map taken down cannot land in
  // another map made since over the same memory.
  std::uint64_t next_map_ = arena_span;
  std::uint64_t next_read_map_ = read_maps_from;
  std::vector<inbound_message> arrived_;
  refusal_meter refusals_;

  bool drain_asked_ = false;  // the node stops: what fails, fails as stopped
  std::function<void()> drained_;
  std::string leaving_;  // why, while leaving
  std::string end_;      // why it closed, for messages taken after
  send_failure end_failure_ = send_failure::node_lost;
  clock::time_point leave_by_, setup_deadline_, next_tick_, next_deadline_;
};

}  // namespace riomesh::actors
