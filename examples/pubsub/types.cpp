// The node-file parameters of each pub/sub actor type (examples/pubsub/
// cluster/*.yaml shows them all).
#include "pubsub.hpp"

#include "actors.hpp"
#include "messages.hpp"

#include <caf/actor_system_config.hpp>

namespace pubsub {
namespace {

using riomesh::config::actor_params;
constexpr std::uint64_t GiB = 1ull << 30;

// What publishers and subscribers both read: where the broker is, the
// topic, how often to report.
template <class Config>
Config client_of(actor_params& p) {
  Config c;
  c.name = p.name();
  c.broker = {p.required_text("broker"), p.text("broker_actor", "broker")};
  c.topic = p.text("topic", c.topic);
  c.report_interval = p.time("report_interval", c.report_interval);
  return c;
}

}  // namespace

void add_types(riomesh::actor_registry& registry) {
  registry.configure(
      [](caf::actor_system_config& cfg) { cfg.add_message_type<sample>("pubsub::sample"); });
  registry.add("pubsub.broker", "topics to subscribers; fans each placed buffer out uncopied",
               [](actor_params& p) -> riomesh::actor_registry::spawner {
                 broker_config c;
                 c.name = p.name();
                 c.report_interval = p.time("report_interval", c.report_interval);
                 c.limits.topics = p.count("max_topics", c.limits.topics, 1, 1'000'000);
                 c.limits.subscribers =
                     p.count("max_subscribers", c.limits.subscribers, 1, 1'000'000);
                 c.limits.ended = p.count("max_ended_streams", c.limits.ended, 0, 10'000'000);
                 return [c](riomesh::runtime& rt) { return spawn_broker(rt, c); };
               });
  registry.add("pubsub.publisher", "sends `messages` samples of `size` bytes to a topic",
               [](actor_params& p) -> riomesh::actor_registry::spawner {
                 auto c = client_of<publisher_config>(p);
                 c.messages = p.count("messages", c.messages, 1, 1'000'000'000);
                 c.size = p.size("size", c.size, 0, GiB);
                 c.rate = p.count("rate", c.rate, 0, 10'000'000);
                 c.window = p.count("window", c.window, 1, 4096);
                 c.wait_for_subscribers =
                     p.count("wait_for_subscribers", c.wait_for_subscribers, 0, 100000);
                 return [c](riomesh::runtime& rt) { return spawn_publisher(rt, c); };
               });
  registry.add("pubsub.subscriber", "checks, counts and times the samples of a topic",
               [](actor_params& p) -> riomesh::actor_registry::spawner {
                 auto c = client_of<subscriber_config>(p);
                 c.publishers = p.count("publishers", c.publishers, 1, 100000);
                 c.pull = p.flag("pull", c.pull);
                 return [c](riomesh::runtime& rt) { return spawn_subscriber(rt, c); };
               });
}

}  // namespace pubsub
