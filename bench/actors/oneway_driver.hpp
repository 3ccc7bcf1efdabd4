// The client of one-way streams, which both actor contenders share:
// messages that get no answer each, sent as fast as the receiver lets.
// The sink acknowledges every `ack_every(j)` messages of a sender with its
// count so far (one small message back per ack_every), and the driver keeps
// at most `j.window` unacknowledged: flow control at the receiver's pace,
// as a TCP window gives raw TCP. After the last message a flush request
// returns the sink's count, which must equal what was sent: completion is
// counted at the receiver. How a message and the flush go out is the
// contender's (`Stream::post(self)`, `Stream::flush(self)`).
#pragma once

#include "drivers.hpp"

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <map>

namespace bench {

using ack_atom = caf::atom_constant<caf::atom("b_ack")>;
using flush_atom = caf::atom_constant<caf::atom("b_flush")>;

inline std::uint32_t ack_every(const job& j) {
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, j.window / 4));
}

// A sink's counts per sender; `counted` says when to acknowledge.
struct sink_counts {
  std::map<caf::actor_addr, std::uint64_t> by_sender;

  // Counts one from the current sender and acknowledges if it is time.
  void counted(caf::event_based_actor* self, std::uint32_t every) {
    auto from = self->current_sender();
    auto& n = by_sender[caf::actor_cast<caf::actor_addr>(from)];
    if (++n % every == 0)
      self->send(caf::actor_cast<caf::actor>(from), ack_atom::value, n);
  }
  // The flush: the count so far, and a fresh start for the next run.
  std::uint64_t flushed(caf::event_based_actor* self) {
    auto key = caf::actor_cast<caf::actor_addr>(self->current_sender());
    auto n = by_sender[key];
    by_sender.erase(key);
    return n;
  }
};

struct oneway_state {
  job j;
  std::uint64_t sent = 0, acked = 0;
  bool flushing = false;
  std::promise<driver_result>* done = nullptr;
};

template <class Stream>
void oneway_top_up(caf::stateful_actor<oneway_state>* self, const Stream& s) {
  auto& st = self->state;
  while (st.sent < st.j.count && st.sent - st.acked < st.j.window) {
    s.post(self);
    ++st.sent;
  }
  if (st.sent < st.j.count || st.flushing)
    return;
  st.flushing = true;
  s.flush(self).then(
      [self](std::uint64_t counted) {
        auto& st = self->state;
        if (counted != st.j.count)
          std::fprintf(stderr, "client: the sink counted %llu of %llu messages\n",
                       static_cast<unsigned long long>(counted),
                       static_cast<unsigned long long>(st.j.count));
        st.done->set_value(driver_result{counted == st.j.count, {}});
        self->quit();
      },
      [self](caf::error& e) {
        std::fprintf(stderr, "client: flush: %s\n", self->system().render(e).c_str());
        self->state.done->set_value(driver_result{});
        self->quit();
      });
}

template <class Stream>
caf::behavior oneway_driver(caf::stateful_actor<oneway_state>* self, job j,
                            std::promise<driver_result>* done, Stream s) {
  self->state.j = j;
  self->state.done = done;
  // Anything else (riomesh's undelivered notice, say) means a message was
  // lost: the run fails rather than count it.
  self->set_default_handler(
      [](caf::scheduled_actor* me, caf::message_view& m) -> caf::result<caf::message> {
        std::fprintf(stderr, "client: unexpected %s\n",
                     caf::to_string(m.copy_content_to_message()).c_str());
        auto* d = static_cast<caf::stateful_actor<oneway_state>*>(me);
        if (!d->state.flushing) {
          d->state.flushing = true;
          d->state.done->set_value(driver_result{});
          d->quit();
        }
        return caf::message{};
      });
  oneway_top_up(self, s);
  return {[self, s](ack_atom, std::uint64_t n) {
    self->state.acked = std::max(self->state.acked, n);
    oneway_top_up(self, s);
  }};
}

template <class Stream>
outcome drive_oneway(caf::actor_system& sys, const job& j, const std::vector<Stream>& streams) {
  return drive_all(j, streams.size(), [&](std::size_t i, std::promise<driver_result>* done) {
    sys.spawn(oneway_driver<Stream>, j, done, streams[i]);
  });
}

}  // namespace bench
