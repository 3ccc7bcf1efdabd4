// The tcp channel's protocol as a state machine without I/O. The socket shell
// asks it where the next received bytes belong (read_target: a frame header,
// the stream ring, or straight into a mapped region) and what to write next
// (write_iov: headers and payloads by reference), and reports what the
// socket did. So a placed payload goes from the socket into its region with
// no user-space copy, and a send gathers from the caller's buffer.
//
// Every inbound frame is checked before a byte of its payload is read: an
// unknown kind, a length over the limit, a placement that is not inside one
// mapped region (overflow-safe), an unmap of an unknown map, a truncated
// frame. Each closes the connection with a reason naming the peer and the
// frame, and nothing outside mapped memory is written.
//
// A gated protocol (a riomesh node's connection) holds the peer's first
// map, unmap or placement frame until authorize(): before its session is
// authenticated a peer may only send the stream bytes of its handshake.
// The session layer, finding the handshake stuck behind such a frame,
// fails the connection with held_frame()'s description.
//
// Encryption (channel::secure) switches each direction at a SECURE frame:
// its sender's bytes after it are TLS records, and the receiver reads
// nothing more until its shell decrypts (input_secured()). The protocol
// itself never sees ciphertext: the shell turns the bytes of write_iov
// into records, and records back into the bytes read_target asks for.
#pragma once

#include <riomesh/channels/channel.hpp>
#include <riomesh/channels/tcp/frame.hpp>
#include <riomesh/channels/tcp/region_set.hpp>

#include <sys/uio.h>

#include <riomesh/config/settings.hpp>

#include <chrono>
#include <deque>
#include <vector>

namespace riomesh::channels::tcp {

struct tcp_params {
  std::size_t recv_ring = 128 * 1024;    // stream bytes received, not yet read
  std::size_t send_buffer = 128 * 1024;  // stream bytes copied while the socket is full
  std::uint32_t max_frame = 16u << 20;   // largest DATA or IOWRITE payload accepted
  std::size_t max_pending = 1024;        // frames queued for the socket
  // Maps the peer may have exposed to us at once (we tell it in our HELLO),
  // and the most of ours it accepts (from its HELLO).
  std::uint32_t max_peer_maps = 16;
  bool gated = false;                                            // see above
  std::chrono::nanoseconds keepalive = std::chrono::seconds(1);  // 0: never
  std::chrono::nanoseconds peer_timeout = std::chrono::seconds(5);

  // The channel section of a node's settings, for tcp.
  static tcp_params from(const config::channel_settings& c);
};

class tcp_protocol {
 public:
  // The receive ring of a gated protocol until it is authorized.
  static constexpr std::size_t setup_ring = 4096;

  tcp_protocol(const tcp_params& p, std::string peer);

  // ---- application (see channel.hpp) -----------------------------------
  // Queues by reference; the shell flushes, then calls detach().
  io_result send(const void* data, std::size_t length);
  // Copies into the DATA frame at the tail of the queue while none of it
  // is written (a new one when there is none, or it holds
  // coalesced_frame), so that many small sends leave as one frame. The
  // same bounds as send().
  io_result send_copy(const void* data, std::size_t length);
  static constexpr std::size_t coalesced_frame = 64 * 1024;
  static constexpr std::size_t first_frame = 4 * 1024;  // a new frame's storage, at least
  io_result recv(void* out, std::size_t length);
  std::pair<const unsigned char*, std::size_t> peek() const;
  void consume(std::size_t n);
  // `once`: the peer writes it once, in order (frame.hpp's map_once).
  map_result map(void* base, std::size_t length, std::optional<std::uint64_t> offset,
                 bool once = false);
  // A once map all written is gone on both sides already: nothing is sent.
  // One not all written is withdrawn as any map, and said incomplete; the
  // peer must not be writing it then (it was never asked to, or it lied
  // and the connection ends): a peer that fills it while the IOUNMAP is on
  // its way no longer knows the map, and closes the connection.
  status unmap(std::uint64_t offset);
  io_result iowrite(const void* source, std::size_t length, std::uint64_t offset,
                    std::uint64_t token);
  // The same for the pieces' bytes one after another: one IOWRITE frame
  // per map and max_frame, its payload from as many pieces as it spans.
  using piece = channel::piece;
  io_result iowrite_pieces(const piece* pieces, std::size_t count, std::uint64_t offset,
                           std::uint64_t token);
  status shutdown(shutdown_how how);
  void keepalive();
  // The session is authenticated: the peer may map and place from now on.
  // `encrypted`: the session agreed on encryption (the peer's SECURE is
  // due); without it, a SECURE is a protocol error.
  void authorize(bool encrypted = false);
  // Queues our SECURE: whatever is queued after it leaves encrypted.
  void secure_output();
  // Our SECURE is written: write_iov's bytes from here on go into records.
  bool output_secured() const { return output_secured_; }
  // The peer's SECURE is in: nothing more is read in the clear.
  bool input_secure_pending() const { return rstate_ == rstate::secure_wait; }
  bool input_secured() const { return input_secured_; }
  // The shell reads records from here on.
  void start_secure_input();
  // What waits for authorize() (a map or placement the peer sent first),
  // described for an error message; empty if nothing.
  const std::string& held_frame() const { return held_; }
  // Timers, with the time passed in: a KEEPALIVE after `keepalive` without
  // sending, and failure after `peer_timeout` without hearing from the peer.
  void tick(std::chrono::steady_clock::time_point now);
  // Keepalives often enough for a peer that gives up after `silence`.
  void keep_alive_within(std::chrono::nanoseconds silence);

  // ---- socket side ---------------------------------------------------------
  // Where the next received bytes go; length 0: do not read now.
  std::pair<unsigned char*, std::size_t> read_target();
  // Whether read_target() would take any bytes now.
  bool takes_bytes() const;
  // The same, plus the next frame's header buffer after a payload, so one
  // readv takes a payload's end and the header behind it: up to 2 iovecs.
  // Once the session is authorized in the clear, headers are read ahead
  // instead (read_ahead): into a buffer of read_ahead_size, with whatever
  // follows them, so that a small message costs one readv, not two. Bytes
  // read ahead go where read_target() says before the socket is read
  // again; while some wait for ring room, read_targets() offers nothing.
  std::size_t read_targets(iovec* iov);
  static constexpr std::size_t read_ahead_size = 4096;
  void on_read(std::size_t n);
  void on_eof();
  void fail(const std::string& why);
  // Up to `max` iovecs of bytes waiting to be written, oldest first; none
  // past a SECURE not yet written (they go encrypted once it is).
  std::size_t write_iov(iovec* iov, std::size_t max) const;
  void on_written(std::size_t n);
  // Copies what the socket did not take of the last send() into our storage,
  // so the caller's buffer is free.
  void detach();
  bool wants_write() const { return !out_.empty(); }
  // Closed and nothing left to write: the shell may close the socket.
  bool finished() const { return closed() && out_.empty(); }

  bool take_events(std::vector<event>& out);
  bool has_events() const { return !events_.empty(); }
  bool closed() const { return phase_ != phase::open; }
  bool failed() const { return phase_ == phase::failed; }
  const std::string& reason() const { return reason_; }
  const std::string& peer() const { return peer_; }
  std::uint64_t frames_received() const { return frames_in_; }
  std::uint64_t bytes_discarded() const { return discarded_; }

 private:
  enum class phase : std::uint8_t { open, done, failed };
  enum class rstate : std::uint8_t { header, data, place, discard, held, secure_wait };
  struct outgoing {
    std::array<unsigned char, header_size> header{};
    std::size_t header_done = 0;
    const unsigned char* payload = nullptr;
    std::size_t payload_length = 0, payload_done = 0;
    std::vector<unsigned char> owned;  // the payload, when we had to copy it
    bool transient = false;            // refers to a send() caller's buffer
    bool reports = false;              // iowrite_done(token, token_bytes) when written
    std::uint64_t token = 0, token_bytes = 0;
    frame_kind kind = frame_kind::keepalive;
  };

  void queue(const frame& f, const unsigned char* payload = nullptr, bool transient = false);
  // More payload for the frame queued last, from elsewhere: an entry with
  // no header of its own.
  void queue_more(const unsigned char* payload, std::size_t length);
  // A frame we owe the peer (IOUNMAP_ACK); false, closing, if too many of
  // them wait already: a peer that never reads is cut off, not served.
  bool queue_control(const frame& f);
  void grow_ring();
  std::pair<unsigned char*, std::size_t> next_target();
  // Moves n bytes read into read_target()'s place through the state machine.
  void take(std::size_t n);
  bool reads_ahead() const { return authorized_ && !encryption_agreed_ && hello_seen_; }
  // Passes what was read ahead on to where it belongs, as far as there is room.
  void drain_ahead();
  void process_header();
  void process_frame(const frame& f);
  void on_hello(const frame& f);
  void finish_payload();
  void protocol_error(const frame& f, const std::string& what);
  void close(phase to, const std::string& why);
  void maybe_done();
  void emit(event e) { events_.push_back(e); }

  tcp_params params_;
  std::string peer_;
  phase phase_ = phase::open;
  std::string reason_;
  std::vector<event> events_;

  // receive side
  rstate rstate_ = rstate::header;
  unsigned char header_[header_size];
  std::size_t header_got_ = 0;
  frame current_;
  std::size_t payload_left_ = 0;
  unsigned char* place_at_ = nullptr;
  region* placing_once_ = nullptr;  // the once map the payload being placed fills
  std::vector<unsigned char> ring_;
  std::size_t ring_head_ = 0, ring_used_ = 0;
  std::vector<unsigned char> scratch_;
  // Read ahead, not yet passed on: [ahead_at_, ahead_end_) of ahead_. With
  // neither a SECURE (TLS records from then on) nor a held frame possible
  // once reads_ahead(), every byte of it is the clear stream.
  std::vector<unsigned char> ahead_;
  std::size_t ahead_at_ = 0, ahead_end_ = 0;
  std::size_t direct_room_ = 0;  // of the last read_targets() offering ahead_
  bool offered_ahead_ = false;
  bool hello_seen_ = false, peer_shut_ = false, read_open_ = true;
  bool authorized_ = false;
  bool encryption_agreed_ = false;  // authorize(true): a SECURE may come
  bool input_secured_ = false, output_secured_ = false, secure_queued_ = false;
  std::string held_;  // the held frame, described
  std::uint64_t frames_in_ = 0, discarded_ = 0;

  // maps: ours (the peer writes into them), withdrawn ones the peer may still
  // be writing to until it acknowledges, and the peer's
  region_set local_maps_, withdrawn_, peer_maps_;
  std::uint32_t peer_accepts_maps_ = 0;  // from its HELLO
  std::size_t control_queued_ = 0;       // IOUNMAP_ACKs not yet written

  // send side
  std::deque<outgoing> out_;
  // A written DATA frame's storage, for the next one: a copied send costs
  // no allocation. Given back at a tick that saw no use of it, so an idle
  // connection holds none.
  std::vector<unsigned char> spare_;
  bool spare_used_ = false;
  std::size_t owned_bytes_ = 0;
  std::size_t transient_bytes_ = 0;  // payload bytes queued by reference to send() callers
  bool write_open_ = true, shutdown_sent_ = false, want_writable_ = false;

  // timers: byte counters seen at the last tick, and when they last moved
  std::uint64_t bytes_in_ = 0, bytes_out_ = 0, ticked_in_ = 0, ticked_out_ = 0;
  std::chrono::steady_clock::time_point heard_{}, spoke_{};
  bool ticking_ = false;
};

}  // namespace riomesh::channels::tcp
