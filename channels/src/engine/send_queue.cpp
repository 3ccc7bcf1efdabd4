#include <riomesh/channels/engine/send_queue.hpp>

#include <algorithm>

namespace riomesh::engine {

// rsockets reserves 4 of the send queue for control messages; a queue too
// small for that (tests run with 4) keeps half for data.
send_queue::send_queue(std::uint32_t sq_size)
    : control_slots_(std::clamp<std::uint32_t>(sq_size / 2, 1, wire::control_slots)),
      data_slots_(sq_size - control_slots_) {}

std::uint64_t send_queue::post(posted_wr wr) {
  wr.wr_id = next_id_++;
  if (is_control(wr.role)) {
    ++control_in_flight_;
    ++control_posted_;
  } else {
    ++data_in_flight_;
  }
  posted_.push_back(wr);
  return wr.wr_id;
}

std::optional<posted_wr> send_queue::complete(std::uint64_t wr_id) {
  if (posted_.empty() || posted_.front().wr_id != wr_id)
    return std::nullopt;
  posted_wr wr = posted_.front();
  posted_.pop_front();
  if (is_control(wr.role))
    --control_in_flight_;
  else
    --data_in_flight_;
  return wr;
}

std::size_t send_queue::drop_all() {
  std::size_t ring_bytes = 0;
  for (const auto& wr : posted_)
    ring_bytes += wr.ring_bytes;
  posted_.clear();
  data_in_flight_ = control_in_flight_ = 0;
  return ring_bytes;
}

}  // namespace riomesh::engine
