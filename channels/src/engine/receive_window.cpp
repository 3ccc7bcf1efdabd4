#include <riomesh/channels/engine/receive_window.hpp>

namespace riomesh::engine {

receive_window::receive_window(std::size_t ring_size, std::uint32_t credits)
    : ring_size_(ring_size),
      half_(ring_size / 2),
      credits_(credits),
      // Half 0 reaches the peer in the private data; half 1 counts as freed,
      // so the first update publishes it (rsocket-wire.md §3.1).
      freed_unpublished_(ring_size / 2),
      next_half_(ring_size / 2),
      published_(ring_size / 2),
      next_credit_update_(static_cast<std::uint16_t>(credits / 2)) {}

std::string receive_window::accept(std::uint32_t length, bool late) {
  if (length == 0)
    return "zero-length DATA";
  if (messages_.size() >= credits_)
    return "DATA beyond the " + std::to_string(credits_) + " credits granted";
  if (received_ + length > published_)
    return "DATA of " + std::to_string(length) + " bytes exceeds the published space (" +
           std::to_string(published_ - received_) + " bytes left)";
  if (received_ % half_ + length > half_)
    return "DATA of " + std::to_string(length) + " bytes crosses the end of a published half";
  received_ += length;
  queued_bytes_ += length;
  messages_.push_back(length);
  if (late) {
    late_bytes_ += length;
    drop_late_when_reached();
  }
  return {};
}

void receive_window::consume(std::size_t n) {
  if (messages_.empty())
    return;
  if (n > messages_.front())
    n = messages_.front();
  messages_.front() -= static_cast<std::uint32_t>(n);
  queued_bytes_ -= n;
  read_offset_ = (read_offset_ + n) % ring_size_;
  freed_unpublished_ += n;
  if (messages_.front() == 0) {
    messages_.pop_front();
    ++consumed_;
  }
  drop_late_when_reached();
}

// Late bytes sit behind everything readable; once nothing readable is left
// ahead of them they are consumed whole, so the ring and credits flow back.
void receive_window::drop_late_when_reached() {
  if (late_bytes_ == 0 || queued_bytes_ != late_bytes_)
    return;
  late_bytes_ = 0;
  while (!messages_.empty())
    consume(messages_.front());
}

receive_window::update receive_window::due() const {
  if (freed_unpublished_ >= half_)
    return update::publish_half;
  if (static_cast<std::int16_t>(consumed_ - next_credit_update_) >= 0)
    return update::credit_only;
  return update::none;
}

std::size_t receive_window::record_update(update kind) {
  next_credit_update_ = static_cast<std::uint16_t>(consumed_ + credits_ / 2);
  if (kind != update::publish_half)
    return 0;
  std::size_t offset = next_half_;
  freed_unpublished_ -= half_;
  next_half_ = (next_half_ + half_) % ring_size_;
  published_ += half_;
  return offset;
}

}  // namespace riomesh::engine
