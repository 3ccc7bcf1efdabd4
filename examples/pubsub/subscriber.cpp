// A subscriber: checks every sample (checksum, and per publisher the
// sequence: no gap, duplicates dropped), measures latency, and reports its
// rate, p50 / p99 latency and the payload bytes its node copied. Done when
// each of `publishers` has sent its last sample. A restarted subscriber
// starts counting at the first sample it gets; a lost broker is looked up
// again and subscribed to when it is back. A publisher started again under
// its name (a new run) starts a new stream: what its old run did not send
// is not counted as lost, and what still comes of that run is dropped.
#include "actors.hpp"
#include "broker_lookup.hpp"
#include "messages.hpp"
#include "payload.hpp"
#include "report.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <map>

namespace pubsub {
namespace {

using clock = std::chrono::steady_clock;

struct stream_position {
  std::uint64_t run = 0;
  std::uint64_t last = 0;  // the last sequence number taken
  bool started = false;    // something of this run came (or its end was told)
  bool done = false;
};

struct subscriber_state {
  subscriber_config cfg;
  riomesh::runtime* rt = nullptr;
  caf::actor broker;
  bool lost_once = false, finished = false;
  std::string refused;  // why the broker last refused us, said once
  std::map<std::string, stream_position> streams;
  std::uint64_t messages = 0, bytes = 0, gaps = 0, duplicates = 0, bad = 0;
  std::uint64_t last_messages = 0;
  // Pulling: each offer's read in flight, by operation id, with the offer
  // and the promise of its ack.
  struct pull {
    sample offer;
    caf::response_promise ack;
  };
  std::map<std::uint64_t, pull> pulls;
  std::uint64_t pulled = 0;
  clock::time_point first, last;
  latency_record latency;
  static inline const char* name = "pubsub.subscriber";
};

using subscriber_ptr = caf::stateful_actor<subscriber_state>*;

void say(subscriber_ptr self, const std::string& event, const fields& values = {}) {
  report("subscriber", self->state.cfg.name, event, values);
}

void find(subscriber_ptr self);

void subscribe(subscriber_ptr self) {
  auto& st = self->state;
  auto broker = st.broker;
  auto asked = st.cfg.pull ? self->request(broker, std::chrono::seconds(5), subscribe_atom::value,
                                           st.cfg.topic, st.cfg.name, st.rt->node_name())
                           : self->request(broker, std::chrono::seconds(5), subscribe_atom::value,
                                           st.cfg.topic, st.cfg.name);
  asked.then(
      [=](std::uint64_t n) {
        self->state.refused.clear();
        say(self, "subscribed",
            {{"topic", self->state.cfg.topic}, {"subscribers", std::to_string(n)}});
      },
      [=](caf::error& e) {
        auto& st = self->state;
        // A refusal (a bound of the broker's) is said once, then tried
        // again: room may come free.
        if (e.category() == caf::atom("system") &&
            e.code() == static_cast<std::uint8_t>(caf::sec::invalid_argument)) {
          auto why = self->system().render(e);
          if (why != st.refused)
            say(self, "subscribe_refused", {{"reason", why}});
          st.refused = why;
        }
        if (st.broker == broker)
          self->delayed_send(self, std::chrono::milliseconds(250), retry_atom::value);
      });
}

void find(subscriber_ptr self) {
  auto& st = self->state;
  look_up_broker(self, st.rt->admin(), st.cfg.broker, [=](caf::actor broker) {
    auto& st = self->state;
    if (st.broker)
      return;
    st.broker = broker;
    self->monitor(broker);
    say(self, st.lost_once ? "broker_back" : "broker_found", {{"node", st.cfg.broker.node}});
    subscribe(self);
  });
}

// Which node copied what: placed buffers cost nothing; inline payload and
// buffers assembled from streamed pieces are copies.
void finish(subscriber_ptr self) {
  auto& st = self->state;
  st.finished = true;
  self->request(st.rt->admin(), std::chrono::seconds(10), riomesh::report_atom::value)
      .then(
          [=](const riomesh::stat_report& r) {
            auto copied = r.value("node.payload_copied_in") + r.peer_sum("streamed_bytes_in");
            auto& st = self->state;
            auto secs = std::chrono::duration<double>(st.last - st.first).count();
            say(self, "summary",
                {{"messages", std::to_string(st.messages)},
                 {"bytes", std::to_string(st.bytes)},
                 {"seconds", fixed(secs, 3)},
                 {"rate_mps", fixed(double(st.messages) / std::max(secs, 1e-9))},
                 {"mib_s", fixed(double(st.bytes) / (1 << 20) / std::max(secs, 1e-9))},
                 {"p50_us", fixed(double(st.latency.percentile(0.5)) / 1e3)},
                 {"p99_us", fixed(double(st.latency.percentile(0.99)) / 1e3)},
                 {"copied_bytes", std::to_string(copied)},
                 {"placed_bytes", std::to_string(r.value("node.bytes_placed_in"))},
                 {"gaps", std::to_string(st.gaps)},
                 {"duplicates", std::to_string(st.duplicates)},
                 {"bad", std::to_string(st.bad)}});
          },
          [=](caf::error& e) {
            say(self, "summary_failed", {{"reason", self->system().render(e)}});
          });
}

void end_stream(subscriber_ptr self, stream_position& stream) {
  auto& st = self->state;
  stream.done = true;
  std::size_t done = 0;
  for (const auto& [name, p] : st.streams)
    done += p.done ? 1 : 0;
  if (done == st.cfg.publishers && !st.finished)
    finish(self);
}

// The stream of `publisher`'s `run`: a new one when the publisher started
// again (a later run); null for an earlier run, whose samples still on the
// way are stale.
stream_position* stream_of(subscriber_ptr self, const std::string& publisher, std::uint64_t run) {
  auto& st = self->state;
  auto [pos, first] = st.streams.try_emplace(publisher);
  auto& stream = pos->second;
  if (first || stream.run == run) {
    stream.run = run;
    return &stream;
  }
  if (run < stream.run)
    return nullptr;
  say(self, "publisher_restarted",
      {{"publisher", publisher},
       {"run", std::to_string(run)},
       {"last_of_old_run", stream.started ? std::to_string(stream.last) : "-"}});
  // A stream that had ended is open again: done once this run ends too.
  if (stream.done)
    st.finished = false;
  stream.run = run;
  stream.last = 0;
  stream.started = stream.done = false;
  return &stream;
}

std::uint64_t take(subscriber_ptr self, const sample& s) {
  auto& st = self->state;
  auto arrived = now_ns();
  auto* stream = stream_of(self, s.publisher, s.run);
  if (!stream || (stream->started && s.seq <= stream->last)) {
    ++st.duplicates;  // sent again after a broker loss, or of an earlier run
    return s.seq;
  }
  if (stream->started && s.seq != stream->last + 1) {
    st.gaps += s.seq - stream->last - 1;
    say(self, "gap",
        {{"publisher", s.publisher},
         {"expected", std::to_string(stream->last + 1)},
         {"got", std::to_string(s.seq)}});
  }
  if (!stream->started)
    say(self, "first", {{"publisher", s.publisher}, {"seq", std::to_string(s.seq)}});
  stream->started = true;
  stream->last = s.seq;
  if (checksum(s.payload) != s.checksum) {
    ++st.bad;
    say(self, "bad_checksum",
        {{"publisher", s.publisher},
         {"seq", std::to_string(s.seq)},
         {"damage", damage(s.payload, s.publisher, s.seq)}});
  }
  auto now = clock::now();
  if (st.messages == 0)
    st.first = now;
  st.last = now;
  ++st.messages;
  st.bytes += s.payload.size();
  st.latency.add(arrived > s.sent_ns ? arrived - s.sent_ns : 0);
  if (s.seq + 1 == s.total && !stream->done)
    end_stream(self, *stream);
  return s.seq;
}

// The broker says a publisher's run ended (its last sample came before we
// subscribed): what we did not get of it is a gap.
void ended(subscriber_ptr self, const std::string& publisher, std::uint64_t run,
           std::uint64_t total) {
  auto& st = self->state;
  auto* stream = stream_of(self, publisher, run);
  if (!stream || stream->done)
    return;
  say(self, "stream_ended", {{"publisher", publisher}, {"total", std::to_string(total)}});
  // A stream of which nothing came counts no gaps, as take() counts none
  // before a stream's first sample: whether this subscriber was there for
  // its start is not known (the launcher judges such a run by
  // stream_ended and the losses it saw).
  if (stream->started && total > stream->last + 1) {
    st.gaps += total - stream->last - 1;
    say(self, "gap",
        {{"publisher", publisher},
         {"expected", std::to_string(stream->last + 1)},
         {"ended_at", std::to_string(total)}});
  }
  // What still comes of it (a post sent again, an offer on its way) is
  // taken as a duplicate, not counted twice.
  stream->last = std::max(stream->last, total - 1);
  stream->started = true;
  end_stream(self, *stream);
}

caf::behavior subscriber(subscriber_ptr self, riomesh::runtime* rt, subscriber_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.rt = rt;
  self->set_down_handler([=](caf::down_msg& d) {
    auto& st = self->state;
    if (d.source != st.broker.address())
      return;
    st.broker = nullptr;
    st.lost_once = true;
    say(self, "broker_lost", {{"reason", d.reason ? self->system().render(d.reason) : "exited"}});
    find(self);
  });
  find(self);
  self->delayed_send(self, self->state.cfg.report_interval, tick_atom::value);
  return {
      [=](deliver_atom, const sample& s) { return take(self, s); },
      [=](ended_atom, const std::string& topic, const std::string& publisher, std::uint64_t run,
          std::uint64_t total) {
        if (topic == self->state.cfg.topic)
          ended(self, publisher, run, total);
      },
      [=](offer_atom, sample& offer, const riomesh::grant& g) -> caf::result<std::uint64_t> {
        auto& st = self->state;
        auto into = st.rt->allocate(g.length);
        auto ack = self->make_response_promise();
        auto op = st.rt->read(g, 0, into, caf::actor_cast<caf::actor>(self));
        offer.payload = std::move(into);
        st.pulls.emplace(op, subscriber_state::pull{std::move(offer), ack});
        return caf::delegated<std::uint64_t>{};
      },
      [=](riomesh::grant_done_atom, std::uint64_t op, riomesh::grant_status status,
          const std::string& detail) {
        auto& st = self->state;
        auto it = st.pulls.find(op);
        if (it == st.pulls.end())
          return;
        auto p = std::move(it->second);
        st.pulls.erase(it);
        if (status == riomesh::grant_status::ok) {
          if (st.pulled++ == 0)
            say(self, "pulling", {{"seq", std::to_string(p.offer.seq)}});
          return p.ack.deliver(take(self, p.offer));
        }
        say(self, "pull_failed",
            {{"seq", std::to_string(p.offer.seq)},
             {"status", riomesh::to_string(status)},
             {"reason", detail}});
        p.ack.deliver(riomesh::make_error(riomesh::errc::refused,
                                          "pulling sample " + std::to_string(p.offer.seq) + ": " +
                                              riomesh::to_string(status) + ": " + detail));
      },
      [=](retry_atom) {
        if (self->state.broker)
          subscribe(self);
        else
          find(self);
      },
      [=](tick_atom) {
        auto& st = self->state;
        auto secs = std::chrono::duration<double>(st.cfg.report_interval).count();
        if (!st.finished && st.messages > 0)
          say(self, "progress",
              {{"messages", std::to_string(st.messages)},
               {"rate_mps", fixed(double(st.messages - st.last_messages) / secs)},
               {"gaps", std::to_string(st.gaps)},
               {"bad", std::to_string(st.bad)}});
        st.last_messages = st.messages;
        self->delayed_send(self, st.cfg.report_interval, tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_subscriber(riomesh::runtime& rt, subscriber_config cfg) {
  return rt.system().spawn(subscriber, &rt, std::move(cfg));
}

}  // namespace pubsub
