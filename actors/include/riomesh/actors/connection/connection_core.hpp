// What a connection actor does for one peer, without the actor and without
// the stream: the logic of "The path of one large buffer" (ARCHITECTURE.md).
// Stream bytes and the channel's events come in (on_bytes, on_end,
// on_closed, on_event); bytes to send (output, then sent) and a shutdown
// (take_shutdown) go out; placements go through the channel's placement
// half (iomap_access), whose answers the core acts on at once.
// connection/core_drive.hpp carries all of it to a channel.
//
// Outbound, in order: a message waits in a queue bounded by max_pending;
// its placed buffers get space in the peer's arena (or it waits: a credit
// stall), go by iowrite straight from their memory, then the envelope with
// their descriptors goes on the stream, so the bytes are in place before
// the peer reads of them. Inbound: envelopes are decoded and checked; their
// buffers are views of our arena, and when a view's last handle drops (on
// any thread) its space goes back to the peer in a batched release.
#pragma once

#include <riomesh/stats.hpp>

#include <riomesh/actors/connection/direct_fetch.hpp>
#include <riomesh/actors/connection/fetch_order.hpp>
#include <riomesh/actors/connection/inbound_message.hpp>
#include <riomesh/actors/connection/send_failure.hpp>
#include <riomesh/actors/connection/send_queue.hpp>
#include <riomesh/actors/envelope/envelope_decoder.hpp>
#include <riomesh/actors/placement/arena_sizing.hpp>
#include <riomesh/actors/placement/arena_steps.hpp>
#include <riomesh/actors/placement/lent_buffers.hpp>
#include <riomesh/actors/placement/own_arena.hpp>
#include <riomesh/actors/placement/peer_arena.hpp>
#include <riomesh/actors/placement/receive_budget.hpp>
#include <riomesh/actors/placement/release_batch.hpp>
#include <riomesh/buffer.hpp>
#include <riomesh/channels/iomap_access.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace riomesh::actors {

class stream_assembly;
class send_registrations;

// Bytes for memory the peer's application mapped (riomap), at its offset:
// rsockets' riowrite, in order with the messages around it.
struct direct_write {
  std::uint64_t offset = 0;
  buffer data;
};

struct outbound_message {
  envelope env;  // kind, sender, receiver, request id, body; buffers are filled in
  std::vector<buffer> placed;
  std::vector<direct_write> writes;  // done first, before any placement
  // Then this, if any: the envelope goes behind it, fenced.
  std::optional<direct_fetch> fetch;
  bool has_envelope = true;  // false: writes only
  // Called (on the I/O thread) if the message is dropped after being
  // queued, with why and a text for the sender.
  failure_callback on_failure;
};

class connection_core {
 public:
  using clock = release_batch::clock;

  struct settings {
    std::string peer;                // who is at the other end, for reasons given
    std::size_t max_pending = 1024;  // queued outbound messages
    envelope_limits inbound;         // inbound.arena_size: our arena's size
    release_batch::limits releases;
    std::uint64_t peer_arena_size = 0;
    // What one envelope may hold at the peer (its session terms): larger
    // ones it would refuse, closing the connection.
    std::uint32_t peer_max_body = 1u << 20;
    std::uint16_t peer_max_buffers = 256;
    // Buffers larger than the peer's arena stream through it
    // (buffer_stream.hpp), both ways: one message's together up to this
    // many bytes (0: refused as too large), and up to max_streams of them.
    std::uint64_t max_streamed = 4ull << 30;
    std::uint32_t max_streams = 8;
    // The peer's own limits for what it assembles (its session terms):
    // the smaller of both holds for what we send.
    std::uint64_t peer_max_streamed = std::numeric_limits<std::uint64_t>::max();
    std::uint32_t peer_max_streams = std::numeric_limits<std::uint32_t>::max();
    // Owns the arena's memory, if anything does: every view holds it, so a
    // delivered buffer stays readable after its connection is gone, and
    // the memory goes when the connection and the last view have.
    std::shared_ptr<void> arena_owner;
    int arena_fd = -1;          // a memfd or dma-buf whose offset 0 is the arena, or -1
    bool arena_dmabuf = false;  // arena_fd is a dma-buf: mapped through it
    // Device memory the fabric cannot place into (a dma-buf the RDMA
    // device does not register): the arena given to the core is host
    // memory the peer writes into, and each buffer is copied from there
    // to the same offset here before delivery (counted as staged_bytes_in).
    unsigned char* staged_to = nullptr;
    // Set: our arena is sized by demand (arena_sizing.hpp), from
    // inbound.arena_size up to arena_cap, in segments made here, within
    // the budget; the `arena` given to the constructor is unused. Unset:
    // the arena given is ours, fixed.
    std::uint64_t arena_cap = 0;
    std::function<arena_segment(std::uint64_t size, std::string& error)> make_segment;
    std::shared_ptr<receive_budget> budget;
    std::chrono::steady_clock::duration sizing_period = std::chrono::seconds(1);
    // The peer's arena: its first segment's size where it sizes it by
    // demand up to peer_arena_size (0: peer_arena_size, fixed).
    std::uint64_t peer_arena_first = 0;
    // Rendezvous (connection_core_rendezvous.cpp): buffers of at least
    // lend_from bytes stay in our memory for the peer to fetch, where it
    // fetches lent buffers (its terms); 0: every buffer is placed. At most
    // max_loans at once: then messages wait, as for arena space.
    std::uint64_t lend_from = 0;
    bool peer_fetches_lent = false;
    std::size_t max_loans = 8;
    // We fetch what the peer lends (inbound.accepts_lent): into memory
    // `destination` gives (at least `size` bytes for the actor `receiver`;
    // empty: a heap buffer), within `fetches`' window; by RDMA READ where
    // reads_one_sided, else the peer pushes it into our map of it.
    fetch_order::limits fetches;
    std::function<buffer(std::uint64_t size, std::uint64_t receiver)> destination;
    bool reads_one_sided = false;
  };
  using counters = connection_counters;
  enum class submit_status { queued, congested, too_large, closed };

  // `arena` (size settings.inbound.arena_size) is ours, mapped for the peer
  // at offset 0 here, through `io`. `wake` is called, from any thread, when
  // released arena space waits to be reported: the owner should then drive it
  // (core_drive.hpp).
  connection_core(channels::iomap_access& io, unsigned char* arena, const settings& s,
                  std::function<void()> wake = {});
  ~connection_core();
  connection_core(const connection_core&) = delete;
  connection_core& operator=(const connection_core&) = delete;

  submit_status submit(outbound_message&& m);

  // Events in. A completion or a peer's map, from the channel.
  void on_event(const channels::event& e);
  // Stream bytes as they arrived (what the peer sent before its channel
  // closed included); returns how many were taken. Fewer than n only once
  // the core failed.
  std::size_t on_bytes(const unsigned char* p, std::size_t n);
  // The peer ended its stream and every byte of it was given.
  void on_end();
  // The channel closed (`why`: its reason); ignored once the core failed.
  void on_closed(const std::string& why);
  // The channel was found closed before the core began: closed() already,
  // its reason still to be given (on_closed).
  bool awaits_reason() const { return channel_lost_ && reason_.empty(); }

  // Starts fetches, reports released space when due, sizes the arena.
  // Returns true if anything moved.
  bool pump(clock::time_point now = clock::now());
  // With nothing left to send (output() empty), the next message goes on:
  // its placements, then its envelope into output(). True if anything
  // moved; false once nothing more can go now.
  bool send_next_message();
  // Work out. Bytes to send, in order; sent(n) once the channel took n of
  // them, send_failed(st) if it refused them. Empty once the core failed.
  std::pair<const unsigned char*, std::size_t> output() const {
    if (!reason_.empty())
      return {nullptr, 0};
    return {out_bytes_.data() + out_pos_, out_bytes_.size() - out_pos_};
  }
  void sent(std::size_t n);
  void send_failed(channels::status st);
  // True once after the core failed: shut the channel down both ways.
  bool take_shutdown() { return std::exchange(shutdown_due_, false); }

  std::vector<inbound_message> take_inbound();
  // The same into `into` (cleared first), both vectors keeping their
  // capacity: no allocation per round on the I/O thread.
  void take_inbound(std::vector<inbound_message>& into);

  bool closed() const { return !reason_.empty() || channel_lost_; }
  // Empty while open.
  const std::string& reason() const {
    return reason_.empty() && channel_lost_ ? lost_reason() : reason_;
  }
  // Closed because the peer ended its stream in order: it stopped, not lost.
  bool peer_stopped() const { return peer_stopped_; }
  counters stats() const;
  std::size_t queue_depth() const { return queue_.size(); }  // cheap: per message
  // Released space is due to go back to the peer: a pump reports it once
  // nothing else waits to be sent (report_releases).
  bool releases_due(clock::time_point now) const { return !batch_.empty() && batch_.due(now); }
  // Nothing queued, nothing half sent, no iowrite or fetch in flight.
  // Nor a buffer lent and not yet fetched, or one of the peer's we fetch.
  bool idle() const {
    return queue_.empty() && in_flight_.empty() && out_bytes_.empty() && fetches_->idle() &&
           lent_.size() == 0 && fetch_order_.idle();
  }
  // When it must be driven even if nothing else happens (a release batch
  // waiting for its delay).
  std::optional<clock::time_point> deadline() const {
    return farewell_out_ ? std::nullopt : batch_.deadline();
  }
  // Stopping, with nothing left to send (idle()): tells the peer this node
  // leaves in order. Nothing is sent after it, not even releases.
  void say_farewell();
  // The connection ended: every message still queued fails with `why`,
  // its sender told through its on_failure (as the link's own queue is).
  void fail_queued(send_failure f, const std::string& why);
  // The connection ended: the send cache lets go of arena segments it
  // registered (views sent on), as a link does of its fixed arena.
  void arena_going() const;

 private:
  struct released;  // arena ranges whose views dropped, shared with them
  bool send_next();
  enum class write_state { done, waiting, dropped };
  // The head's direct writes, resumed where the channel stopped taking.
  write_state write_direct(outbound_message& m);
  void drop_head(const std::string& why, send_failure f = send_failure::not_mapped);
  bool report_releases(clock::time_point now);
  void deliver(envelope&& e);
  void fail(const std::string& why);
  // The arena's steps (connection_core_arena.cpp).
  void on_step(const envelope& e);
  bool move_arena(std::uint64_t size, clock::time_point now);
  bool size_arena(clock::time_point now);
  bool answer_want(clock::time_point now);
  void send_step(const arena_step& s);
  // The head cannot be placed: ask for space, or stream what can never fit.
  bool on_no_space(outbound_message& m);
  bool split_head(std::uint64_t fits);
  bool elastic() const { return settings_.arena_cap > 0; }
  // Rendezvous (connection_core_rendezvous.cpp).
  bool lends(const outbound_message& m, const buffer& b) const;
  std::optional<std::uint64_t> lend(const buffer& b);
  void take_back_loan(std::uint64_t offset);
  void on_fetch_step(const arena_step& s);
  bool start_fetches();
  void fetch_landed(const fetch_order::job& j, buffer into);
  // Where a lent buffer lands: the destination given for its receiver, or
  // the heap.
  buffer landing_for(const fetch_order::job& j);
  buffer fetched_view(buffer into, std::uint64_t length);
  void hold_or_pass(inbound_message&& m, const std::vector<std::size_t>& lent);
  // Ahead of the queue's messages not started yet: the core's own work.
  void push_control(outbound_message&& m);
  // A segment of `size` bytes at `offset`, its memory given back to the
  // budget when its last view drops; data is null if none could be made.
  arena_segment make_segment(std::uint64_t size, std::uint64_t offset, std::string& error);

  channels::iomap_access& io_;
  unsigned char* arena_;
  settings settings_;
  std::string reason_;
  bool shutdown_due_ = false;
  // The channel had closed when our arena was to be mapped: nothing it
  // still holds is read (it would land in an arena the peer never had),
  // and the reason is the channel's, once its driver gives it.
  bool channel_lost_ = false;
  static const std::string& lost_reason();
  bool peer_stopped_ = false;
  bool farewell_in_ = false, farewell_out_ = false;
  bool peer_mapped_ = false;
  peer_arena peer_arena_;
  own_arena own_;
  std::optional<arena_sizing> sizing_;
  std::optional<std::uint64_t> awaiting_left_;  // we moved from this segment
  std::optional<std::uint64_t> pending_want_;   // the peer's, not answered yet
  clock::time_point pending_since_{};
  std::optional<std::uint64_t> left_due_;  // the peer moved us from this one
  bool wanting_ = false;                   // a want is out
  clock::time_point next_want_{};          // after a kept
  clock::time_point now_{};
  std::uint64_t current_in_use_ = 0;  // of our current segment
  // Segments whose memory lives (views hold it after the peer left one).
  std::shared_ptr<std::atomic<int>> alive_ = std::make_shared<std::atomic<int>>(0);
  envelope_decoder decoder_;
  release_batch batch_;
  std::shared_ptr<released> released_;
  send_queue<outbound_message> queue_;
  // The head message's progress: arena space taken, buffers written so far.
  bool head_allocated_ = false;
  bool head_fetched_ = false;  // its fetch went
  std::size_t write_index_ = 0, write_done_ = 0;
  std::size_t place_index_ = 0, place_done_ = 0;
  bool stalled_ = false;
  // Encoded, not yet handed to the channel (output()): an envelope, or
  // releases, arena steps, the farewell.
  std::vector<unsigned char> out_bytes_;
  std::size_t out_pos_ = 0;
  std::uint64_t next_token_ = 1;
  std::map<std::uint64_t, buffer> in_flight_;          // iowrite sources until done
  std::vector<channels::iomap_access::piece> pieces_;  // write_pieces' scratch
  std::vector<inbound_message> inbound_;
  std::unique_ptr<stream_assembly> streams_;
  std::unique_ptr<send_registrations> regs_;
  std::unique_ptr<fetch_flights> fetches_;
  lent_buffers lent_;
  fetch_order fetch_order_;
  // Lent buffers of the peer's it pushes into our maps, by its offset.
  struct pull {
    fetch_order::job job;
    buffer into;
    std::uint64_t map = 0;
  };
  std::map<std::uint64_t, pull> pulls_;
  std::uint64_t next_pull_map_ = pull_maps_from;
  bool pulls_once_ = true;  // the channel maps them to be written once
  static constexpr std::uint64_t pull_maps_from = std::uint64_t{1} << 60;
  std::map<std::uint64_t, std::uint64_t> leases_;  // iowrite token -> pinned registration
  std::map<std::uint64_t, std::vector<std::uint64_t>> piece_leases_;  // of write_pieces
  // The channel cannot send from device memory: m's buffers in it go from
  // host copies.
  bool stage_device_out_ = false;
  void stage_device_memory(outbound_message& m);
  // Starts an iowrite of b's bytes [done, size) at `offset`, with its
  // memory registered (or pinned) for it.
  channels::io_result write_from(const buffer& b, std::size_t done, std::uint64_t offset);
  channels::io_result write_pieces(const buffer& b, std::size_t done, std::uint64_t offset);
  counters stats_;
  std::uint64_t arena_released_ = 0;  // bytes of our arena whose views dropped
};

}  // namespace riomesh::actors
