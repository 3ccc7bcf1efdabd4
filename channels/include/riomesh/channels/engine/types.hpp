// The vocabulary between the rsocket engine and whoever drives it: memory it
// may use, work it asks to be posted, completions and calls it takes, events
// it reports. No verbs types: a fabric translates.
#pragma once

#include <riomesh/channels/wire/constants.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace riomesh::engine {

// A registered memory region: where it is, its keys.
struct region {
  unsigned char* base = nullptr;
  std::size_t length = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  std::uint64_t addr() const { return reinterpret_cast<std::uint64_t>(base); }
};

// The memory of one connection, registered by the fabric before start().
struct regions {
  region target_list;  // wire::target_list_size(iomap_slots) bytes, zeroed, remote-writable
  region recv_ring;    // even length; the peer writes stream bytes here
  region send_ring;    // local staging for stream bytes and control payloads
};

struct params {
  std::uint32_t sq_size = 384;
  std::uint32_t rq_size = 384;  // also the credits we grant
  std::uint32_t inline_size = 64;
  std::uint32_t iomap_slots = 0;  // slots the peer may publish into (wire-exact count)
  std::uint32_t first_chunk = wire::first_chunk;
  std::uint32_t max_transfer = wire::max_transfer;
  std::uint32_t max_write = 1u << 30;  // largest single zero-copy riowrite
  // Scatter-gather entries a work request may carry (the queue pair's
  // max_send_sge, at most max_work_sges): pieces of a gathered riowrite
  // share work requests up to this many.
  std::uint32_t max_sge = 2;
  // RDMA READs and atomics the queue pair may have outstanding as the
  // initiator (the connection's negotiated initiator depth); 0: rioread
  // and rioatomic are refused (rsockets' connections negotiate none).
  std::uint32_t max_rd_atomic = 0;
  // Count an arriving IOMAP_SGL as a consumed message and say so in the
  // connection data (wire::flag_iomap_credit). Off: behave as a plain rsocket.
  bool iomap_credit = true;
};

enum class work_kind : std::uint8_t {
  write_with_imm,
  write,
  post_recv,
  read,       // RDMA READ of remote_addr into the SGEs
  fetch_add,  // 8-byte atomics at remote_addr; the old value into sge[0]
  compare_swap,
};

struct local_sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
};

constexpr std::size_t max_work_sges = 8;

// One work request for the fabric to post, in order.
struct work {
  work_kind kind = work_kind::write;
  std::uint64_t wr_id = 0;
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t imm = 0;  // host order; the fabric converts
  std::uint8_t num_sge = 0;
  bool inline_data = false;  // small enough to copy into the work request
  std::array<local_sge, max_work_sges> sge{};
  std::uint32_t recv_count = 0;  // post_recv: that many zero-SGE receives
  // fetch_add: the addend; compare_swap: the value expected, and the one
  // swapped in.
  std::uint64_t compare_add = 0, swap = 0;
  // Starts only once every earlier RDMA READ and atomic of the queue pair
  // has completed (IBV_SEND_FENCE): what is posted behind a read, such as
  // the message saying it is done, cannot overtake it at the peer.
  bool fence = false;

  std::uint64_t length() const {
    std::uint64_t n = 0;
    for (std::uint8_t i = 0; i < num_sge; ++i)
      n += sge[i].length;
    return n;
  }
};

enum class completion_status : std::uint8_t {
  success,
  flushed,             // the QP went to error before this request ran
  remote_access,       // bad rkey or out-of-bounds at the responder
  rnr_retry_exceeded,  // the responder had no receive posted, retries ran out
  retry_exceeded,      // the responder stopped answering
  local_error,         // bad lkey, length, or local QP error
  other,
};

struct send_completion {
  std::uint64_t wr_id = 0;
  completion_status status = completion_status::success;
  std::string detail;  // the fabric's own words, e.g. the verbs status string
};

struct recv_completion {
  std::uint32_t imm = 0;       // host order
  std::uint32_t byte_len = 0;  // payload length of the write that consumed the receive
  completion_status status = completion_status::success;
  std::string detail;
};

enum class event_kind : std::uint8_t {
  readable,       // stream bytes, or end of stream, can be read
  writable,       // a send or riowrite that would block can go on
  iowrite_done,   // `token`'s writes completed; its source may be reused
  ioread_done,    // `token`'s reads completed: its `bytes` are in place
  ioatomic_done,  // `token`'s atomic completed: the old value is in place
  peer_iomap,     // the peer published iomap slot `index` (tcp: map at `token`, `bytes` long)
  peer_iounmap,   // tcp: the peer withdrew its map at `token`
  closed,         // disconnected or failed; reason() says which
};

struct event {
  event_kind kind = event_kind::readable;
  std::uint64_t token = 0;
  std::uint64_t bytes = 0;
  std::uint32_t index = 0;
  std::uint64_t value = 0;  // ioatomic_done: the word's old value (the fabric reads it)
};

enum class status : std::uint8_t {
  ok,
  would_block,  // accepted only `bytes`; wait for a writable event
  eof,          // the peer shut down its sending side and all bytes are read
  closed,       // the connection failed or the peer disconnected: see reason()
  shut_down,    // this side shut that direction down
  no_mapping,   // riowrite, rioread: no peer iomap entry holds the offset
  no_space,     // riomap: no free slot in the peer's iomap table
  invalid,      // a call's arguments contradict the state (overlap, unknown map)
  unsupported,  // rioread, rioatomic: the connection negotiated no RDMA READ
  incomplete,   // unmap of a map to be written once that was not all written
};

struct io_result {
  std::size_t bytes = 0;
  status st = status::ok;
};

enum class shutdown_how : std::uint8_t { read, write, both };

const char* to_string(status value);
const char* to_string(completion_status value);

}  // namespace riomesh::engine
