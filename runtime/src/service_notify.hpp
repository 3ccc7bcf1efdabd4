// riomesh-node under systemd (Type=notify): READY=1 once its actors are up,
// WATCHDOG=1 while the node answers (WatchdogSec), STOPPING=1 on the way
// out. Without NOTIFY_SOCKET (not run by systemd) every call is a no-op.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace riomesh::detail {

class service_notify {
 public:
  // `answers(limit)`: whether the node answered within `limit`. The
  // watchdog is fed only then, so that systemd restarts a node that hangs.
  explicit service_notify(std::function<bool(std::chrono::milliseconds)> answers);
  ~service_notify();
  service_notify(const service_notify&) = delete;
  service_notify& operator=(const service_notify&) = delete;

  void ready(const std::string& status);
  void stopping();

 private:
  void feed(std::chrono::microseconds period);

  std::function<bool(std::chrono::milliseconds)> answers_;
  std::mutex lock_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread watchdog_;
};

}  // namespace riomesh::detail
