// The client both actor contenders share: keeps `window` requests open
// until `count` are answered, and times each round trip for "rtt". How one
// request is made (`send(self, seq)`, returning CAF's response handle) is
// the contender's.
#pragma once

#include "measure.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <future>

namespace bench {

struct driver_state {
  job j;
  std::uint64_t sent = 0, acked = 0;
  clock_type::time_point start;
  std::vector<double> rtts;
  std::promise<outcome>* done = nullptr;
};

template <class Send>
void send_next(caf::stateful_actor<driver_state>* self, Send send) {
  auto& st = self->state;
  auto sent_at = clock_type::now();
  send(self, st.sent++)
      .then(
          [self, sent_at, send](std::uint64_t) {
            auto& st = self->state;
            if (st.j.pattern == "rtt")
              st.rtts.push_back(
                  std::chrono::duration<double, std::micro>(clock_type::now() - sent_at).count());
            if (++st.acked == st.j.count) {
              st.done->set_value(finish(st.j, st.start, st.rtts));
              self->quit();
            } else if (st.sent < st.j.count) {
              send_next(self, send);
            }
          },
          [self](caf::error& e) {
            std::fprintf(stderr, "client: %s\n", self->system().render(e).c_str());
            self->state.done->set_value(outcome{});
            self->quit();
          });
}

template <class Send>
caf::behavior window_driver(caf::stateful_actor<driver_state>* self, job j,
                            std::promise<outcome>* done, Send send) {
  auto& st = self->state;
  st.j = j;
  st.done = done;
  st.rtts.reserve(j.pattern == "rtt" ? j.count : 0);
  st.start = clock_type::now();
  for (std::uint64_t i = 0; i < j.window && i < j.count; ++i)
    send_next(self, send);
  return {[](std::uint64_t) {}};
}

// Spawns the driver and waits for its outcome.
template <class Send>
outcome drive_window(caf::actor_system& sys, const job& j, Send send) {
  std::promise<outcome> done;
  auto result = done.get_future();
  sys.spawn(window_driver<Send>, j, &done, send);
  return result.get();
}

}  // namespace bench
