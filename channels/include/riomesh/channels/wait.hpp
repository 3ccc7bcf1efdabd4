// Waiting on one channel the way a progress thread does: busy-poll for the
// configured polling time (completions are often a few microseconds away),
// then arm the fabric's wake-up and sleep on its fd.
#pragma once

#include <riomesh/channels/channel.hpp>

#include <chrono>
#include <functional>
#include <optional>

namespace riomesh::channels {

using wait_clock = std::chrono::steady_clock;

// Drives `ch` until `done()` is true (checked after every progress step;
// it should take the channel's events itself) or `deadline` passes.
// Spins on busy_poll() for `polling_time`, then arms the wake-up, sleeps on
// wait_fd() and takes in what woke it with progress(). False on timeout.
bool wait_until(channel& ch, const std::function<bool()>& done,
                std::chrono::nanoseconds polling_time,
                std::optional<wait_clock::time_point> deadline = std::nullopt);

}  // namespace riomesh::channels
