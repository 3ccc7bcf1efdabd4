// The broker: topics to subscribers. A post is answered once every
// subscriber of its topic has taken the sample (or is gone), which is what
// paces the publishers. Every subscriber gets the same sample: a local one
// the buffer handle, a remote one an iowrite from the very memory the post
// was placed in, registered once for the connection that sends it on.
#include "actors.hpp"
#include "broker_lookup.hpp"
#include "messages.hpp"
#include "report.hpp"
#include "topic_table.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include <map>
#include <memory>
#include <vector>

namespace pubsub {
namespace {

struct member {
  caf::actor who;
  std::string name;
  std::string pull_node;  // the node it pulls from us on; empty: pushed to
};

struct broker_state {
  broker_config cfg;
  riomesh::runtime* rt = nullptr;
  topic_table<member> topics{topic_limits{}};
  std::uint64_t posts = 0, deliveries = 0, failures = 0, refused = 0;
  static inline const char* name = "pubsub.broker";
};

using broker_ptr = caf::stateful_actor<broker_state>*;

void say(broker_ptr self, const std::string& event, const fields& values = {}) {
  report("broker", self->state.cfg.name, event, values);
}

void drop(broker_ptr self, const caf::actor_addr& who, const std::string& why) {
  self->state.topics.drop(
      [&](const member& m) { return m.who.address() == who; },
      [&](const std::string& topic, const member& m) {
        say(self, "subscriber_left", {{"name", m.name}, {"topic", topic}, {"reason", why}});
      });
}

caf::result<std::uint64_t> post(broker_ptr self, sample& s) {
  auto& st = self->state;
  ++st.posts;
  st.topics.posted(s.topic, s.publisher, s.run);
  if (s.total > 0 && s.seq + 1 == s.total)
    st.topics.ended(s.topic, s.publisher, s.run, s.total);
  auto members = st.topics.members(s.topic);
  if (members.empty())
    return std::uint64_t{0};
  struct fan_out {
    caf::typed_response_promise<std::uint64_t> rp;
    std::size_t left = 0;
    std::uint64_t reached = 0;
    void one_done() {
      if (--left == 0)
        rp.deliver(reached);
    }
  };
  auto f = std::make_shared<fan_out>();
  f->rp = self->make_response_promise<std::uint64_t>();
  f->left = members.size();
  for (const auto& m : members) {
    auto name = m.name;
    auto who = m.who.address();
    auto taken = [=](std::uint64_t) {
      ++self->state.deliveries;
      ++f->reached;
      f->one_done();
    };
    auto failed = [=](caf::error& e) {
      ++self->state.failures;
      auto why = self->system().render(e);
      say(self, "delivery_failed", {{"name", name}, {"reason", why}});
      if (peer_gone(e))
        drop(self, who, why);
      f->one_done();
    };
    if (m.pull_node.empty()) {
      self->request(m.who, std::chrono::seconds(30), deliver_atom::value, s).then(taken, failed);
      continue;
    }
    // Lent for one read, from where the post was placed: the subscriber's
    // node fetches the bytes, and the grant ends with that.
    auto offer = s;
    offer.payload = riomesh::buffer{};
    auto to = m.who;
    self->request(st.rt->iomap_manager(), std::chrono::seconds(10), riomesh::grant_atom::value,
                  m.pull_node, s.payload, static_cast<std::uint8_t>(riomesh::grant_rights::read),
                  true)
        .then(
            [=](riomesh::grant& g) {
              self->request(to, std::chrono::seconds(30), offer_atom::value, offer, g)
                  .then(taken, failed);
            },
            failed);
  }
  return f->rp;
}

caf::result<std::uint64_t> join(broker_ptr self, const std::string& topic, const std::string& name,
                                const std::string& pull_node) {
  auto& st = self->state;
  auto who = caf::actor_cast<caf::actor>(self->current_sender());
  if (!who)
    return caf::sec::invalid_argument;
  auto refuse = [&](const std::string& why) -> caf::result<std::uint64_t> {
    // Refused subscribers try again: said at the 1st, 2nd, 4th, ... refusal.
    auto n = ++st.refused;
    if ((n & (n - 1)) == 0)
      say(self, "subscribe_refused",
          {{"name", name}, {"topic", topic}, {"refusals", std::to_string(n)}, {"reason", why}});
    return caf::make_error(caf::sec::invalid_argument,
                           "broker " + st.cfg.name + ": subscription of '" + name + "' to topic '" +
                               topic + "' refused: " + why);
  };
  switch (st.topics.join(topic, {who, name, pull_node})) {
    case topic_table<member>::joined::no_topic_room:
      return refuse("the broker holds max_topics=" + std::to_string(st.topics.limits().topics) +
                    " topics");
    case topic_table<member>::joined::no_subscriber_room:
      return refuse("the topic has max_subscribers=" +
                    std::to_string(st.topics.limits().subscribers) + " subscribers");
    case topic_table<member>::joined::added:
      self->monitor(who);
      say(self, "subscriber_joined",
          {{"name", name},
           {"topic", topic},
           {"subscribers", std::to_string(st.topics.count(topic))},
           {"delivery", pull_node.empty() ? "push" : "pull"}});
      break;
    case topic_table<member>::joined::known:
      break;
  }
  // A subscriber back after a loss waits for no stream that has ended.
  for (const auto& e : st.topics.ended_on(topic))
    self->send(who, ended_atom::value, topic, e.publisher, e.run, e.total);
  return std::uint64_t{st.topics.count(topic)};
}

caf::behavior broker(broker_ptr self, riomesh::runtime* rt, broker_config cfg) {
  self->state.topics = topic_table<member>{cfg.limits};
  self->state.cfg = std::move(cfg);
  self->state.rt = rt;
  self->set_down_handler([=](caf::down_msg& d) {
    drop(self, d.source, d.reason ? self->system().render(d.reason) : "exited");
  });
  say(self, "ready");
  self->delayed_send(self, self->state.cfg.report_interval, tick_atom::value);
  return {
      [=](subscribe_atom, const std::string& topic, const std::string& name)
          -> caf::result<std::uint64_t> { return join(self, topic, name, {}); },
      [=](subscribe_atom, const std::string& topic, const std::string& name,
          const std::string& node) -> caf::result<std::uint64_t> {
        return join(self, topic, name, node);
      },
      [=](subscribers_atom, const std::string& topic) {
        return std::uint64_t{self->state.topics.count(topic)};
      },
      [=](post_atom, sample& s) { return post(self, s); },
      [=](tick_atom) {
        self->delayed_send(self, self->state.cfg.report_interval, tick_atom::value);
        // With the node's counters: what fanning out cost in copies and in
        // memory registrations (rdma: one per connection, then cache hits).
        self->request(self->state.rt->admin(), std::chrono::seconds(5), riomesh::report_atom::value)
            .then(
                [=](const riomesh::stat_report& r) {
                  auto& st = self->state;
                  say(self, "progress",
                      {{"posts", std::to_string(st.posts)},
                       {"deliveries", std::to_string(st.deliveries)},
                       {"failures", std::to_string(st.failures)},
                       {"refused", std::to_string(st.refused)},
                       {"topics", std::to_string(st.topics.topics())},
                       {"copied_in", std::to_string(r.value("node.payload_copied_in"))},
                       {"copied_out", std::to_string(r.value("node.payload_copied_out"))},
                       {"placed_out", std::to_string(r.value("node.bytes_placed_out"))},
                       {"registrations", std::to_string(r.peer_sum("registrations"))},
                       {"registration_hits", std::to_string(r.peer_sum("registration_hits"))}});
                },
                [](caf::error&) {});
      },
  };
}

}  // namespace

caf::actor spawn_broker(riomesh::runtime& rt, broker_config cfg) {
  return rt.system().spawn(broker, &rt, std::move(cfg));
}

}  // namespace pubsub
