// How long the I/O thread polls before it sleeps. At least `polling_time`
// after anything moved; longer, up to `max_polling_time`, while the node's
// traffic keeps coming back within that: when three of the last four quiet
// gaps (from the moment nothing moved to the next thing that did) were at
// most `max_polling_time` long, the thread polls that long. A spin ends
// when something moves, so polling the most costs more than polling just
// past the usual gap only where nothing comes: at the end of a burst.
// (Polling the usual gap and a quarter left one reply in three or two to
// a wake-up in the VM: the gaps there spread widely.)
//
// Why: a reply that lands while the thread polls costs no wake-up, and a
// wake-up is the dearest part of a hop where a hop is slow. Under QEMU's
// TCG a request and its reply take 250-500 us each way, longer than a
// 50 us spin, so every message found the thread asleep; polling that long
// always would burn a core on every idle node. The gaps are measured, so
// a node whose traffic is sparse keeps the short spin.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>

namespace riomesh::actors {

class spin_budget {
 public:
  using clock = std::chrono::steady_clock;

  spin_budget(std::chrono::nanoseconds polling_time, std::chrono::nanoseconds max_polling_time);

  // The thread found nothing to do at `now`; the first call after
  // something moved starts a quiet gap.
  void went_quiet(clock::time_point now);
  // Something moved at `now`: a quiet gap, if one was open, is learned.
  void moved(clock::time_point now);
  // How long to poll after something moved.
  std::chrono::nanoseconds spin() const { return spin_; }
  // Past the least spin, the thread polls politely (it yields its core to
  // any other thread that wants it).
  std::chrono::nanoseconds least() const { return least_; }

 private:
  void learn(std::chrono::nanoseconds gap);

  std::chrono::nanoseconds least_, most_, spin_;
  std::array<std::chrono::nanoseconds, 4> gaps_{};
  std::size_t next_ = 0, seen_ = 0;
  bool quiet_ = false;
  clock::time_point quiet_since_{};
};

}  // namespace riomesh::actors
