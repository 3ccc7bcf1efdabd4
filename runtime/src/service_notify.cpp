#include "service_notify.hpp"

#include <systemd/sd-daemon.h>

#include <algorithm>

namespace riomesh::detail {

service_notify::service_notify(std::function<bool(std::chrono::milliseconds)> answers)
    : answers_(std::move(answers)) {}

service_notify::~service_notify() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    done_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable())
    watchdog_.join();
}

void service_notify::ready(const std::string& status) {
  sd_notify(0, ("READY=1\nSTATUS=" + status).c_str());
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0 && !watchdog_.joinable())
    watchdog_ = std::thread([this, usec] { feed(std::chrono::microseconds(usec)); });
}

void service_notify::stopping() {
  sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

// Twice per period, as sd_watchdog_enabled(3) advises; the node gets a
// quarter of the period to answer.
void service_notify::feed(std::chrono::microseconds period) {
  auto every = std::max<std::chrono::microseconds>(period / 2, std::chrono::milliseconds(1));
  auto limit = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(period / 4),
                        std::chrono::milliseconds(1));
  std::unique_lock<std::mutex> guard(lock_);
  while (!wake_.wait_for(guard, every, [this] { return done_; })) {
    guard.unlock();
    bool alive = answers_(limit);
    guard.lock();
    if (alive && !done_)
      sd_notify(0, "WATCHDOG=1");
  }
}

}  // namespace riomesh::detail
