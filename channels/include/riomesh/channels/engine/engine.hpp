// One rsocket stream connection as a state machine (rsocket-wire.md): it takes
// application calls and fabric completions, and returns work requests to post
// and events to report. It performs no I/O and reads no clock; the memory it
// touches is the connection's own registered regions.
//
// Driving it: construct, post the initial receives from take_work(), exchange
// local_conn_data() with the peer, start(peer), then loop: post take_work(),
// feed completions, handle take_events().
#pragma once

#include <riomesh/channels/engine/iomap_table.hpp>
#include <riomesh/channels/engine/receive_window.hpp>
#include <riomesh/channels/engine/send_queue.hpp>
#include <riomesh/channels/engine/staging_ring.hpp>
#include <riomesh/channels/engine/types.hpp>
#include <riomesh/channels/wire/byte_order.hpp>
#include <riomesh/channels/wire/conn_data.hpp>
#include <riomesh/channels/wire/immediate.hpp>

#include <optional>
#include <string>
#include <vector>

namespace riomesh::engine {

// A view of counters and limits, for tests and statistics.
struct engine_state {
  std::uint16_t sends = 0;         // sseq_no
  std::uint16_t send_limit = 0;    // sseq_comp
  std::uint32_t peer_credits = 0;  // the most the peer ever grants beyond sseq_no
  std::uint16_t consumed = 0;      // rseq_no
  std::uint32_t data_in_flight = 0;
  std::uint32_t control_in_flight = 0;
  std::size_t queued_bytes = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_published = 0;
  std::uint64_t credit_stalls = 0;  // sends that found no credit
  std::uint64_t late_bytes = 0;     // sent by the peer after its SHUTDOWN: dropped
};

class engine {
 public:
  engine(const params& p, const regions& mem);

  // The private data to send in the connect request or reply.
  wire::conn_data local_conn_data() const;
  // Applies the peer's private data. False (and closed) if it is unusable.
  bool start(const wire::conn_data& peer);

  // ---- application calls: never block -----------------------------------
  io_result send(const void* data, std::size_t length);
  io_result recv(void* out, std::size_t length);
  // The unread bytes of the oldest message, in place; then consume(n).
  std::pair<const unsigned char*, std::size_t> peek() const;
  void consume(std::size_t n);
  std::size_t readable_bytes() const { return window_.queued_bytes(); }

  iomap_table::added riomap(const region& r, bool remote_write,
                            std::optional<std::uint64_t> offset = std::nullopt);
  status riounmap(std::uint64_t addr, std::uint64_t length);
  // Zero-copy: writes from registered memory; `token` comes back in an
  // iowrite_done event when this call's writes have completed.
  io_result riowrite(const local_sge& source, std::uint64_t offset, std::uint64_t token);
  // riowrite of the sources' bytes one after another (a gathered buffer):
  // a work request carries up to params.max_sge of them.
  io_result riowrite_sges(const local_sge* sources, std::size_t count, std::uint64_t offset,
                          std::uint64_t token);
  // One-sided, where the connection negotiated RDMA READ (max_rd_atomic):
  // reads [offset, offset + total) of the peer's mapped space into the
  // registered destinations, one after another; `token` comes back in an
  // ioread_done event once all of it is in place. Not part of rsockets.
  io_result rioread(const local_sge* into, std::size_t count, std::uint64_t offset,
                    std::uint64_t token);
  // An 8-byte atomic (work_kind::fetch_add or compare_swap) on the peer's
  // mapped word at `offset` (aligned in the peer's memory, within one
  // entry: invalid otherwise); its old value
  // goes to `result` (8 registered bytes) before the ioatomic_done event.
  io_result rioatomic(work_kind kind, const local_sge& result, std::uint64_t offset,
                      std::uint64_t a, std::uint64_t b, std::uint64_t token);
  // The initiator depth the connection negotiated once it is up (rdma_cm
  // settles it with the connection): rioread and rioatomic are refused
  // while it is 0.
  void set_read_depth(std::uint32_t depth) { params_.max_rd_atomic = depth; }
  // Copies through the staging ring first, as rsockets does.
  io_result riowrite_copy(const void* data, std::size_t length, std::uint64_t offset);
  // The peer's iomap slot `index` as it stands in our memory.
  wire::iomap_entry target_iomap(std::uint32_t index) const;

  status shutdown(shutdown_how how);
  // A zero-length write that makes the fabric notice a dead peer.
  void keepalive();

  // ---- fabric events ------------------------------------------------------
  void on_send_completion(const send_completion& c);
  void on_recv_completion(const recv_completion& c);
  // The connection manager reports the peer gone.
  void on_disconnected(const std::string& why);
  // The fabric failed locally (e.g. could not post).
  void fail(const std::string& why);

  // ---- outputs ------------------------------------------------------------
  // Appends pending work / events to `out`; true if there were any.
  bool take_work(std::vector<work>& out);
  bool take_events(std::vector<event>& out);
  bool has_events() const { return !events_.empty(); }

  bool connected() const { return phase_ == phase::connected; }
  bool closed() const { return phase_ == phase::disconnected || phase_ == phase::failed; }
  bool failed() const { return phase_ == phase::failed; }
  // Why the engine closed; empty while it has not.
  const std::string& reason() const { return reason_; }
  bool can_send() const;
  // Why a send would block now, the first of can_send()'s conditions that
  // fails (null if none does): for a stalled connection's report.
  const char* send_blocker() const;
  // Nothing posted is still waiting for its completion, nothing is queued.
  bool drained() const { return queue_.empty() && !pending_ctrl_ && !iomaps_.has_pending(); }
  // The oldest posted work request without its completion yet; null if none.
  const posted_wr* oldest_posted() const { return queue_.oldest(); }
  engine_state state() const;
  const params& parameters() const { return params_; }

 private:
  enum class phase : std::uint8_t { idle, connected, disconnected, failed };

  // send side (engine_send.cpp)
  bool has_credit() const;
  wire::sge current_target() const;
  void consume_target(std::uint32_t n);
  bool publish_iomaps();
  io_result write_stream(const unsigned char* data, std::size_t length);
  std::optional<io_result> refuse_write() const;
  io_result write_mapped(const unsigned char* copy_from, const local_sge* sources,
                         std::size_t count, std::size_t length, std::uint64_t offset,
                         std::uint64_t token);
  std::optional<wire::iomap_entry> find_target_iomap(std::uint64_t offset) const;
  void note_blocked(bool stream);
  void check_writable();

  // receive side (engine_recv.cpp)
  void on_data(std::uint32_t length, std::uint32_t byte_len);
  void on_sgl(std::uint32_t data, std::uint32_t byte_len);
  void on_iomap_sgl(std::uint32_t data, std::uint32_t byte_len);
  void on_ctrl(std::uint32_t code);
  void update_credits();
  void repost_receive();

  // control (engine.cpp)
  void post(work w, posted_wr record);
  void send_pending_ctrl();
  void protocol_error(const std::string& why);
  void close(phase to, const std::string& why);
  void emit(event e) { events_.push_back(e); }

  params params_;
  regions mem_;
  phase phase_ = phase::idle;
  std::string reason_;

  // connection, from the peer's private data
  wire::byte_order peer_order_ = wire::host_order();
  wire::sge peer_sgl_;    // the peer's target SGL slots (where our updates go)
  wire::sge peer_iomap_;  // the peer's iomap slots (where our entries go)
  std::uint32_t peer_credits_ = 0;
  bool peer_counts_iomap_ = false;

  // send side
  send_queue queue_;
  staging_ring ring_;
  unsigned char* control_area_ = nullptr;  // control_slots x 16 bytes after the ring
  std::uint16_t sseq_no_ = 0;
  std::uint16_t sseq_comp_ = 0;
  std::uint32_t target_slot_ = 0;
  std::uint32_t remote_slot_ = 1;  // next peer SGL slot we publish into
  std::uint32_t low_water_ = wire::send_low_water;
  bool write_open_ = true;
  bool stream_blocked_ = false;   // a send or iomap publication waits
  bool iowrite_blocked_ = false;  // a riowrite waits for send queue or ring space
  std::uint64_t credit_stalls_ = 0;
  std::uint64_t late_bytes_ = 0;
  std::optional<wire::ctrl_code> pending_ctrl_;
  // RDMA READs and atomics posted and not completed: writes posted now
  // are fenced behind them.
  std::uint32_t reads_in_flight_ = 0;

  // receive side
  receive_window window_;
  bool read_open_ = true;
  bool peer_sending_ = true;  // false after the peer's SHUTDOWN or DISCONNECT
  // Our SHUTDOWN was acknowledged: with the peer's, both directions are over.
  bool shutdown_acked_ = false;
  bool end_posted_ = false;  // our SHUTDOWN or DISCONNECT went out
  bool eof_reported_ = false;

  iomap_table iomaps_;
  std::vector<work> work_;
  std::vector<event> events_;
};

}  // namespace riomesh::engine
