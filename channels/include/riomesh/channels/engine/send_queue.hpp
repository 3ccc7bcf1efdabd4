// Accounting of posted send work requests: the data budget, the control
// budget reserved so that credit updates can always go out (else two full
// senders would deadlock), and the FIFO that matches completions.
#pragma once

#include <riomesh/channels/engine/types.hpp>

#include <deque>
#include <optional>

namespace riomesh::engine {

enum class wr_role : std::uint8_t {
  data,
  iomap,
  iowrite,
  credit,
  ctrl,
  keepalive,
  ioread,
  ioatomic
};

struct posted_wr {
  std::uint64_t wr_id = 0;
  wr_role role = wr_role::data;
  std::uint32_t ring_bytes = 0;  // staging ring space to give back
  std::uint64_t token = 0;       // iowrite, ioread: reported when `last` completes
  std::uint64_t token_bytes = 0;
  bool last = false;
  std::uint32_t ctrl_code = 0;
  std::uint64_t bytes = 0;  // what the request moves: its time on the wire
};

class send_queue {
 public:
  explicit send_queue(std::uint32_t sq_size);

  std::uint32_t control_slots() const { return control_slots_; }
  bool data_available() const { return data_in_flight_ < data_slots_; }
  bool control_available() const { return control_in_flight_ < control_slots_; }
  std::uint32_t data_in_flight() const { return data_in_flight_; }
  std::uint32_t control_in_flight() const { return control_in_flight_; }
  std::uint64_t control_posted() const { return control_posted_; }
  bool empty() const { return posted_.empty(); }
  // The oldest request still waiting for its completion; null if none.
  const posted_wr* oldest() const { return posted_.empty() ? nullptr : &posted_.front(); }

  static bool is_control(wr_role role) {
    return role == wr_role::credit || role == wr_role::ctrl || role == wr_role::keepalive;
  }

  // Records a request and returns its wr_id. The caller checked the budget.
  std::uint64_t post(posted_wr wr);
  // Matches a completion to the oldest request; empty if it is not that one.
  std::optional<posted_wr> complete(std::uint64_t wr_id);
  // The most recently posted request, to mark the end of a multi-part call.
  posted_wr& newest() { return posted_.back(); }
  // Forgets everything in flight (the QP is gone); returns the ring bytes held.
  std::size_t drop_all();

 private:
  std::uint32_t control_slots_;
  std::uint32_t data_slots_;
  std::uint32_t data_in_flight_ = 0;
  std::uint32_t control_in_flight_ = 0;
  std::uint64_t control_posted_ = 0;
  std::uint64_t next_id_ = 1;
  std::deque<posted_wr> posted_;
};

}  // namespace riomesh::engine
