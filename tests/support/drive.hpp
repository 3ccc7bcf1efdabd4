// Test helpers that run channels the way a progress thread would: poll on
// their descriptors, call progress(), collect events, with a deadline.
#pragma once

#include <riomesh/channels/channel.hpp>

#include <poll.h>

#include <chrono>
#include <functional>
#include <vector>

namespace riomesh::test {

// Calls progress() on `ch` until `done()` or the deadline; events are
// appended to `events` if given. False on timeout.
inline bool drive(channels::channel& ch, const std::function<bool()>& done,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20),
                  std::vector<channels::event>* events = nullptr) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<channels::event> scratch;
  for (;;) {
    ch.progress();
    scratch.clear();
    ch.take_events(scratch);
    if (events)
      events->insert(events->end(), scratch.begin(), scratch.end());
    if (done())
      return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{ch.wait_fd(), static_cast<short>(POLLIN | (ch.wants_write() ? POLLOUT : 0)), 0};
    ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 50)));
  }
}

// Sends all of [data, data + n), driving the channel while it pushes back.
inline bool send_all(channels::channel& ch, const void* data, std::size_t n,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto* p = static_cast<const unsigned char*>(data);
  std::size_t sent = 0;
  return drive(
             ch,
             [&] {
               auto r = ch.send(p + sent, n - sent);
               sent += r.bytes;
               return sent == n || r.st == channels::status::closed ||
                      r.st == channels::status::shut_down;
             },
             timeout) &&
         sent == n;
}

// Receives exactly n bytes (false on end of stream, close or timeout).
inline bool recv_all(channels::channel& ch, void* out, std::size_t n,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto* p = static_cast<unsigned char*>(out);
  std::size_t got = 0;
  bool ended = false;
  drive(
      ch,
      [&] {
        auto r = ch.recv(p + got, n - got);
        got += r.bytes;
        ended = r.st == channels::status::eof || r.st == channels::status::closed;
        return got == n || ended;
      },
      timeout);
  return got == n;
}

}  // namespace riomesh::test
