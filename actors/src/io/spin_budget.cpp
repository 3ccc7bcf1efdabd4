#include <riomesh/actors/io/spin_budget.hpp>

#include <algorithm>

namespace riomesh::actors {

spin_budget::spin_budget(std::chrono::nanoseconds polling_time,
                         std::chrono::nanoseconds max_polling_time)
    : least_(polling_time), most_(std::max(polling_time, max_polling_time)), spin_(polling_time) {}

void spin_budget::went_quiet(clock::time_point now) {
  if (quiet_)
    return;
  quiet_ = true;
  quiet_since_ = now;
}

void spin_budget::moved(clock::time_point now) {
  if (!quiet_)
    return;
  quiet_ = false;
  learn(std::chrono::duration_cast<std::chrono::nanoseconds>(now - quiet_since_));
}

void spin_budget::learn(std::chrono::nanoseconds gap) {
  if (most_ == least_)
    return;
  gaps_[next_] = gap;
  next_ = (next_ + 1) % gaps_.size();
  seen_ = std::min(seen_ + 1, gaps_.size());
  if (seen_ < gaps_.size())
    return;
  auto sorted = gaps_;
  std::sort(sorted.begin(), sorted.end());
  spin_ = sorted[2] <= most_ ? most_ : least_;  // three of four came within it
}

}  // namespace riomesh::actors
