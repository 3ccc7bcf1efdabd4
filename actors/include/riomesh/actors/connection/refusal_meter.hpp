// How a member's refused messages are told and borne. Each refusal is
// logged while a window holds few of them; more are counted, and their
// number logged once the window is over; past `cut_after` in one window the
// member is cut off. A member must not flood the log, nor keep the node
// busy refusing it. Time comes in from the caller.
#pragma once

#include <chrono>
#include <cstddef>

namespace riomesh::actors {

class refusal_meter {
 public:
  using clock = std::chrono::steady_clock;
  struct limits {
    std::size_t logged = 20;      // refusals logged one by one per window
    std::size_t cut_after = 100;  // refusals in one window that cut the member off
    std::chrono::milliseconds window{10000};
  };
  struct verdict {
    bool log = false;             // log this one
    bool first_unlogged = false;  // the first of this window not logged: say so
    std::size_t unlogged = 0;     // the last window's refusals not logged (say so, if > 0)
    bool cut = false;             // cut the member off now
  };

  refusal_meter() : refusal_meter(limits{}) {}
  explicit refusal_meter(limits l) : limits_(l) {}
  verdict note(clock::time_point now);
  std::size_t total() const { return total_; }

 private:
  limits limits_;
  clock::time_point window_start_{};
  std::size_t in_window_ = 0, unlogged_ = 0, total_ = 0;
  bool started_ = false;
};

}  // namespace riomesh::actors
