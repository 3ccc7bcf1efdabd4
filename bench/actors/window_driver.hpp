// The client both actor contenders share: keeps `window` requests open to
// each target until `count` are answered by each, and times each round trip
// for "rtt" and "echo". How one request is made (`send(self, seq)`,
// returning CAF's response handle) is the contender's, one `send` per
// target, and so is the reply's type (`Reply`: the sequence number, or for
// "echo" the payload back).
#pragma once

#include "drivers.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

namespace bench {

using echo_atom = caf::atom_constant<caf::atom("b_echo")>;

struct driver_state {
  job j;
  std::uint64_t sent = 0, acked = 0;
  driver_result result;
  std::promise<driver_result>* done = nullptr;
};

template <class Reply, class Send>
void send_next(caf::stateful_actor<driver_state>* self, Send send) {
  auto& st = self->state;
  auto sent_at = clock_type::now();
  send(self, st.sent++)
      .then(
          [self, sent_at, send](const Reply&) {
            auto& st = self->state;
            if (round_trips(st.j))
              st.result.rtts.push_back(
                  std::chrono::duration<double, std::micro>(clock_type::now() - sent_at).count());
            if (++st.acked == st.j.count) {
              st.result.ok = true;
              st.done->set_value(std::move(st.result));
              self->quit();
            } else if (st.sent < st.j.count) {
              send_next<Reply>(self, send);
            }
          },
          [self](caf::error& e) {
            std::fprintf(stderr, "client: %s\n", self->system().render(e).c_str());
            self->state.done->set_value(driver_result{});
            self->quit();
          });
}

template <class Reply, class Send>
caf::behavior window_driver(caf::stateful_actor<driver_state>* self, job j,
                            std::promise<driver_result>* done, Send send) {
  auto& st = self->state;
  st.j = j;
  st.done = done;
  st.result.rtts.reserve(round_trips(j) ? j.count : 0);
  for (std::uint64_t i = 0; i < j.window && i < j.count; ++i)
    send_next<Reply>(self, send);
  return {[](std::uint64_t) {}};
}

template <class Reply, class Send>
outcome drive_window(caf::actor_system& sys, const job& j, const std::vector<Send>& sends) {
  return drive_all(j, sends.size(), [&](std::size_t i, std::promise<driver_result>* done) {
    sys.spawn(window_driver<Reply, Send>, j, done, sends[i]);
  });
}

// drive_window with one `make(target)` per target.
template <class Reply = std::uint64_t, class Make>
outcome drive_targets(caf::actor_system& sys, const job& j, const std::vector<caf::actor>& targets,
                      Make make) {
  std::vector<decltype(make(caf::actor{}))> sends;
  for (const auto& t : targets)
    sends.push_back(make(t));
  return drive_window<Reply>(sys, j, sends);
}

}  // namespace bench
