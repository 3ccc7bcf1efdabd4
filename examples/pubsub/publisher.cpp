// A publisher: `messages` samples of `size` bytes on one topic, at `rate` per
// second or as fast as the broker's acks allow, with at most `window` posts
// unanswered. It starts once the broker has `wait_for_subscribers`. When the
// broker is lost, the posts it had not answered are sent again, in order,
// once it is back (subscribers drop what they already have): delivery is at
// least once across a broker restart, and exactly once, in order, otherwise.
// Each start is a run of its own (a number from its start time, in every
// sample), so that subscribers tell a publisher started again under the
// same name from one that sends its samples again.
#include "actors.hpp"
#include "broker_lookup.hpp"
#include "messages.hpp"
#include "payload.hpp"
#include "report.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <random>
#include <set>

namespace pubsub {
namespace {

using clock = std::chrono::steady_clock;
enum class phase { finding, waiting, sending, done };

struct publisher_state {
  publisher_config cfg;
  riomesh::runtime* rt = nullptr;
  caf::actor broker;
  phase now = phase::finding;
  bool lost_once = false;
  std::uint64_t run = 0;
  std::uint64_t epoch = 0;  // answers from a lost broker are ignored
  std::uint64_t next = 0;   // the next sequence number never sent
  std::set<std::uint64_t> resend, in_flight;
  std::uint64_t acked = 0, sent = 0, last_acked = 0;
  clock::time_point started;
  bool pacing = false;
  static inline const char* name = "pubsub.publisher";
};

using publisher_ptr = caf::stateful_actor<publisher_state>*;

void say(publisher_ptr self, const std::string& event, const fields& values = {}) {
  report("publisher", self->state.cfg.name, event, values);
}

void find(publisher_ptr self);
void pump(publisher_ptr self);

void lost(publisher_ptr self, const std::string& why) {
  auto& st = self->state;
  if (st.now == phase::finding || st.now == phase::done)
    return;
  ++st.epoch;
  st.resend.insert(st.in_flight.begin(), st.in_flight.end());
  st.in_flight.clear();
  if (st.broker)
    self->demonitor(st.broker);
  st.broker = nullptr;
  st.now = phase::finding;
  st.lost_once = true;
  say(self, "broker_lost", {{"reason", why}, {"unacked", std::to_string(st.resend.size())}});
  find(self);
}

// Starts once the broker has enough subscribers (again, after a loss).
void poll_subscribers(publisher_ptr self) {
  auto& st = self->state;
  auto epoch = st.epoch;
  self->request(st.broker, std::chrono::seconds(5), subscribers_atom::value, st.cfg.topic)
      .then(
          [=](std::uint64_t n) {
            auto& st = self->state;
            if (epoch != st.epoch || st.now != phase::waiting)
              return;
            if (n < st.cfg.wait_for_subscribers) {
              self->delayed_send(self, std::chrono::milliseconds(50), retry_atom::value);
              return;
            }
            if (st.sent == 0)
              st.started = clock::now();
            st.now = phase::sending;
            say(self, "sending",
                {{"subscribers", std::to_string(n)}, {"run", std::to_string(st.run)}});
            pump(self);
          },
          [=](caf::error& e) {
            if (epoch == self->state.epoch)
              lost(self, self->system().render(e));
          });
}

void find(publisher_ptr self) {
  auto& st = self->state;
  look_up_broker(self, st.rt->admin(), st.cfg.broker, [=](caf::actor broker) {
    auto& st = self->state;
    if (st.now != phase::finding)
      return;
    st.broker = broker;
    self->monitor(broker);
    st.now = phase::waiting;
    say(self, st.lost_once ? "broker_back" : "broker_found", {{"node", st.cfg.broker.node}});
    poll_subscribers(self);
  });
}

void post(publisher_ptr self, std::uint64_t seq) {
  auto& st = self->state;
  sample s;
  s.topic = st.cfg.topic;
  s.publisher = st.cfg.name;
  s.run = st.run;
  s.seq = seq;
  s.total = st.cfg.messages;
  s.payload = st.rt->allocate(st.cfg.size);
  fill(s.payload, st.cfg.name, seq);
  s.checksum = checksum(s.payload);
  s.sent_ns = now_ns();
  st.in_flight.insert(seq);
  ++st.sent;
  auto epoch = st.epoch;
  self->request(st.broker, std::chrono::seconds(60), post_atom::value, std::move(s))
      .then(
          [=](std::uint64_t) {
            auto& st = self->state;
            if (epoch != st.epoch)
              return;
            st.in_flight.erase(seq);
            ++st.acked;
            pump(self);
          },
          [=](caf::error& e) {
            auto& st = self->state;
            if (epoch != st.epoch)
              return;
            if (peer_gone(e))
              return lost(self, self->system().render(e));
            // Refused here (congested) or timed out: send it again, in order,
            // after a pause.
            st.in_flight.erase(seq);
            st.resend.insert(seq);
            say(self, "post_refused",
                {{"seq", std::to_string(seq)}, {"reason", self->system().render(e)}});
            self->delayed_send(self, std::chrono::milliseconds(100), retry_atom::value);
          });
}

// How many new samples the rate allows by now (all of them at rate 0).
std::uint64_t allowed(const publisher_state& st) {
  if (st.cfg.rate == 0)
    return st.cfg.messages;
  auto elapsed = std::chrono::duration<double>(clock::now() - st.started).count();
  return std::min<std::uint64_t>(st.cfg.messages,
                                 1 + static_cast<std::uint64_t>(elapsed * double(st.cfg.rate)));
}

void pump(publisher_ptr self) {
  auto& st = self->state;
  if (st.now != phase::sending)
    return;
  // Lost posts first, oldest first, and never behind a newer one: a post
  // waits until every older one has been sent again.
  while (st.in_flight.size() < st.cfg.window && !st.resend.empty()) {
    auto seq = *st.resend.begin();
    st.resend.erase(st.resend.begin());
    post(self, seq);
  }
  auto budget = allowed(st);
  while (st.in_flight.size() < st.cfg.window && st.resend.empty() && st.next < budget)
    post(self, st.next++);
  if (st.acked == st.cfg.messages) {
    st.now = phase::done;
    auto secs = std::chrono::duration<double>(clock::now() - st.started).count();
    say(self, "done",
        {{"messages", std::to_string(st.acked)},
         {"sent", std::to_string(st.sent)},
         {"seconds", fixed(secs, 3)},
         {"rate_mps", fixed(double(st.acked) / std::max(secs, 1e-9))}});
    return;
  }
  if (st.next < st.cfg.messages && st.next >= budget && !st.pacing) {
    st.pacing = true;  // the rate holds the next one back: look again soon
    auto gap = std::chrono::nanoseconds(1'000'000'000 / st.cfg.rate);
    self->delayed_send(self, std::max<std::chrono::nanoseconds>(gap, std::chrono::milliseconds(1)),
                       pace_atom::value);
  }
}

caf::behavior publisher(publisher_ptr self, riomesh::runtime* rt, publisher_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.rt = rt;
  // Later runs are larger: the start in microseconds of its host's clock,
  // with random bits below, for two started in the same microsecond.
  auto started = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  self->state.run =
      (static_cast<std::uint64_t>(started.count()) << 8) | (std::random_device{}() & 0xffu);
  self->set_down_handler([=](caf::down_msg& d) {
    if (d.source == self->state.broker.address())
      lost(self, d.reason ? self->system().render(d.reason) : "exited");
  });
  find(self);
  self->delayed_send(self, self->state.cfg.report_interval, tick_atom::value);
  return {
      [=](retry_atom) {
        auto& st = self->state;
        if (st.now == phase::finding)
          find(self);
        else if (st.now == phase::waiting)
          poll_subscribers(self);
        else
          pump(self);
      },
      [=](pace_atom) {
        self->state.pacing = false;
        pump(self);
      },
      [=](tick_atom) {
        auto& st = self->state;
        auto secs = std::chrono::duration<double>(st.cfg.report_interval).count();
        if (st.now == phase::sending)
          say(self, "progress",
              {{"acked", std::to_string(st.acked)},
               {"total", std::to_string(st.cfg.messages)},
               {"in_flight", std::to_string(st.in_flight.size())},
               {"rate_mps", fixed(double(st.acked - st.last_acked) / secs)}});
        st.last_acked = st.acked;
        if (st.now != phase::done)
          self->delayed_send(self, st.cfg.report_interval, tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_publisher(riomesh::runtime& rt, publisher_config cfg) {
  return rt.system().spawn(publisher, &rt, std::move(cfg));
}

}  // namespace pubsub
