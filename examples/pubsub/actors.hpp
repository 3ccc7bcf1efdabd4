// The pub/sub actor types and what each is told by its node file.
#pragma once

#include "topic_table.hpp"

#include <riomesh/runtime.hpp>

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace pubsub {

struct broker_config {
  std::string name;
  std::chrono::nanoseconds report_interval = std::chrono::seconds(1);
  topic_limits limits;
};

// Where the broker is: an actor published as `actor` on node `node`.
struct broker_address {
  std::string node;
  std::string actor = "broker";
};

struct publisher_config {
  std::string name;
  broker_address broker;
  std::string topic = "ticks";
  std::uint64_t messages = 1000;
  std::uint64_t size = 1 << 20;
  std::uint64_t rate = 0;     // messages per second; 0: as fast as the acks allow
  std::uint64_t window = 16;  // posts waiting for the broker's ack
  std::uint64_t wait_for_subscribers = 1;
  std::chrono::nanoseconds report_interval = std::chrono::seconds(1);
};

struct subscriber_config {
  std::string name;
  broker_address broker;
  std::string topic = "ticks";
  std::uint64_t publishers = 1;  // done when each has sent its last sample
  bool pull = false;             // read each payload by grant instead of having it pushed
  std::chrono::nanoseconds report_interval = std::chrono::seconds(1);
};

caf::actor spawn_broker(riomesh::runtime& rt, broker_config cfg);
caf::actor spawn_publisher(riomesh::runtime& rt, publisher_config cfg);
caf::actor spawn_subscriber(riomesh::runtime& rt, subscriber_config cfg);

}  // namespace pubsub
