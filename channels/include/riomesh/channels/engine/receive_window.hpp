// The receive side's bookkeeping, without touching memory: the DATA messages
// sitting in the receive ring, the read position, which halves of the ring
// the peer may fill, the credit limit granted, and when an SGL update is due.
// It is also where inbound DATA is checked against what was granted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace riomesh::engine {

class receive_window {
 public:
  receive_window() = default;
  // `ring_size` is even: the ring is published to the peer in two halves.
  receive_window(std::size_t ring_size, std::uint32_t credits);

  std::size_t half() const { return half_; }

  // An inbound DATA of `length` bytes: empty if acceptable, else why not.
  // A `late` one (sent after the peer's SHUTDOWN) takes its space but is
  // never read: it is handed back once the bytes before it have been read.
  std::string accept(std::uint32_t length, bool late = false);

  // Nothing left to read (late bytes never count).
  bool empty() const { return messages_.empty(); }
  std::size_t queued_bytes() const { return queued_bytes_ - late_bytes_; }
  std::size_t read_offset() const { return read_offset_; }
  // Bytes of the oldest message still unread; they are contiguous in the ring.
  std::size_t head_remaining() const { return messages_.empty() ? 0 : messages_.front(); }
  // Marks `n` <= head_remaining() bytes read.
  void consume(std::size_t n);
  // An IOMAP_SGL arrived: it counts as a consumed message (see wire::flag_iomap_credit).
  void count_message() { ++consumed_; }

  enum class update { none, publish_half, credit_only };
  update due() const;
  // The absolute credit limit an SGL update carries now.
  std::uint32_t credit_limit() const { return static_cast<std::uint32_t>(consumed_) + credits_; }
  // Records a sent update; for publish_half returns the offset of the half.
  std::size_t record_update(update kind);

  std::uint16_t consumed() const { return consumed_; }
  std::uint64_t bytes_received() const { return received_; }
  std::uint64_t bytes_published() const { return published_; }

 private:
  void drop_late_when_reached();

  std::size_t ring_size_ = 0;
  std::size_t half_ = 0;
  std::uint32_t credits_ = 0;
  std::deque<std::uint32_t> messages_;  // unread bytes of each unconsumed DATA
  std::size_t queued_bytes_ = 0;
  std::size_t late_bytes_ = 0;  // at the tail of messages_, to drop unread
  std::size_t read_offset_ = 0;
  std::size_t freed_unpublished_ = 0;     // read and not yet handed back
  std::size_t next_half_ = 0;             // ring offset of the next half to publish
  std::uint64_t published_ = 0;           // bytes the peer has ever been given
  std::uint64_t received_ = 0;            // bytes the peer has ever written
  std::uint16_t consumed_ = 0;            // rseq_no
  std::uint16_t next_credit_update_ = 0;  // rseq_comp
};

}  // namespace riomesh::engine
