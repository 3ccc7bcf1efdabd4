#include <riomesh/channels/wait.hpp>

#include <poll.h>

#include <algorithm>

namespace riomesh::channels {

bool wait_until(channel& ch, const std::function<bool()>& done,
                std::chrono::nanoseconds polling_time,
                std::optional<wait_clock::time_point> deadline) {
  // The caller has just acted: look cheaply first. System calls only on
  // the way to sleep (arm) and after waking (progress).
  bool woke = false;
  for (;;) {
    if (woke)
      ch.progress();
    else
      ch.busy_poll();
    if (done())
      return true;
    auto spin_end = wait_clock::now() + polling_time;
    while (wait_clock::now() < spin_end)
      if (ch.busy_poll() && done())
        return true;
    // The last look before sleeping: arm() makes the fd signal what lands
    // from now on and takes in what landed before, so nothing goes
    // unnoticed. (Connection manager events need no arming: the fd shows
    // them, and progress() takes them in after the wake-up.)
    ch.arm();
    if (done())
      return true;
    int timeout_ms = -1;
    if (deadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - wait_clock::now());
      if (left.count() <= 0)
        return false;
      timeout_ms = static_cast<int>(std::min<long long>(left.count(), 1000 * 1000));
    }
    pollfd p{ch.wait_fd(), static_cast<short>(POLLIN | (ch.wants_write() ? POLLOUT : 0)), 0};
    ::poll(&p, 1, timeout_ms);
    woke = true;
  }
}

}  // namespace riomesh::channels
