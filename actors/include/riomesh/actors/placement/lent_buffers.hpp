// The sender's side of a rendezvous: buffers too large to place eagerly
// stay in the sender's memory, lent to the peer at offsets of their own,
// until the peer has fetched them (read them one-sided, or had them
// pushed into its map). Each is held here until then: the sender's
// application learns it may reuse a buffer when its last handle drops,
// which is when this table lets go.
//
// Offsets are never reused while the connection lives, and two lent
// buffers never share a page: a late read of an old offset cannot reach a
// newer buffer.
#pragma once

#include <riomesh/actors/envelope/envelope.hpp>
#include <riomesh/buffer.hpp>

#include <cstdint>
#include <map>
#include <optional>

namespace riomesh::actors {

class lent_buffers {
 public:
  struct loan {
    buffer data;
    bool mapped = false;  // mapped for the peer to read (one-sided)
    bool pulled = false;  // the peer asked for it to be pushed
  };
  explicit lent_buffers(std::size_t max_loans) : max_(max_loans) {}

  // No more loans now (the peer has not fetched enough yet).
  bool full() const { return loans_.size() >= max_; }
  // The offset a loan of `size` bytes goes to, mapped for the peer to
  // read or to be pushed, or nothing if those offsets ran out.
  std::optional<std::uint64_t> next_offset(std::uint64_t size, bool mapped) const;
  // Records `b` at next_offset(b.size(), mapped).
  std::uint64_t lend(buffer b, bool mapped);
  loan* find(std::uint64_t offset);
  // The loan at `offset`, no longer held here.
  std::optional<loan> take(std::uint64_t offset);
  std::size_t size() const { return loans_.size(); }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::size_t max_;
  std::uint64_t next_mapped_ = wire_envelope::lent_from;
  std::uint64_t next_pushed_ = wire_envelope::lent_pushed_from;
  std::uint64_t bytes_ = 0;
  std::map<std::uint64_t, loan> loans_;
};

}  // namespace riomesh::actors
