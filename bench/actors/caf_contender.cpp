// CAF 0.17's own middleman, as a user would pick instead: publish /
// remote_actor over TCP (BASP), the payload a std::vector<char> prebuilt
// once as a message (no per-send copy on the sender; BASP serializes it on
// the way out and deserializes it into a new vector on the way in). Same
// scheduler as riomesh's runtime (sharing, one worker per core, unless
// the bench says otherwise).
#include "measure.hpp"
#include "oneway_driver.hpp"
#include "window_driver.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>

#include <thread>

namespace bench {
namespace {

std::unique_ptr<caf::actor_system_config> config() {
  auto cfg = std::make_unique<caf::actor_system_config>();
  cfg->load<caf::io::middleman>();
  cfg->set("scheduler.policy", stealing_policy() ? caf::atom("stealing") : caf::atom("sharing"));
  auto threads = scheduler_threads();
  cfg->set("scheduler.max-threads",
           threads ? threads : static_cast<std::size_t>(std::thread::hardware_concurrency()));
  cfg->set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

caf::behavior sink(caf::stateful_actor<sink_counts>* self) {
  return {
      [](std::uint64_t seq, const std::vector<char>&) { return seq; },
      [](std::uint64_t x) { return x; },
      [](echo_atom, std::uint64_t, std::vector<char>& v) { return std::move(v); },
      // One way: (ack_every, payload).
      [self](std::uint32_t every, const std::vector<char>&) { self->state.counted(self, every); },
      [self](flush_atom) { return self->state.flushed(self); },
  };
}

}  // namespace

int caf_serve(int) {
  auto cfg = config();
  caf::actor_system sys{*cfg};
  auto s = sys.spawn(sink);
  auto port = sys.middleman().publish(s, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "caf server: %s\n", sys.render(port.error()).c_str());
    return 1;
  }
  announce_ready(*port);
  serve_until_stdin_closes();
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  return 0;
}

int caf_drive(const ports& to, const job& j) {
  auto cfg = config();
  caf::actor_system sys{*cfg};
  std::vector<caf::actor> sinks;
  for (auto port : to) {
    auto target = sys.middleman().remote_actor("127.0.0.1", port);
    if (!target) {
      std::fprintf(stderr, "caf client: %s\n", sys.render(target.error()).c_str());
      return 1;
    }
    sinks.push_back(*target);
  }
  // (seq 0, payload), built once: the payload is shared, never copied here.
  auto prebuilt = caf::make_message(std::uint64_t{0}, std::vector<char>(j.size, 'x'));
  auto ping = [](caf::actor sink) {
    return [sink](auto* self, std::uint64_t seq) {
      return self->request(sink, std::chrono::seconds(30), seq);
    };
  };
  auto post = [&prebuilt](caf::actor sink) {
    return [sink, prebuilt](auto* self, std::uint64_t) {
      return self->request(sink, std::chrono::seconds(60), prebuilt);
    };
  };
  struct stream {
    caf::actor sink;
    caf::message message;  // (ack_every, payload), built once
    void post(caf::event_based_actor* self) const { self->send(sink, message); }
    auto flush(caf::event_based_actor* self) const {
      return self->request(sink, std::chrono::seconds(60), flush_atom::value);
    }
  };
  auto echoed =
      caf::make_message(echo_atom::value, std::uint64_t{0}, std::vector<char>(j.size, 'x'));
  auto echo = [&echoed](caf::actor sink) {
    return [sink, echoed](auto* self, std::uint64_t) {
      return self->request(sink, std::chrono::seconds(60), echoed);
    };
  };
  outcome o;
  if (j.pattern == "echo") {
    o = drive_targets<std::vector<char>>(sys, j, sinks, echo);
  } else if (j.pattern == "oneway") {
    auto oneway = caf::make_message(ack_every(j), std::vector<char>(j.size, 'x'));
    std::vector<stream> streams;
    for (auto& s : sinks)
      streams.push_back({s, oneway});
    o = drive_oneway(sys, j, streams);
  } else {
    o = j.pattern == "rtt" ? drive_targets(sys, j, sinks, ping)
                           : drive_targets(sys, j, sinks, post);
  }
  print(o);
  return o.seconds > 0 ? 0 : 1;
}

}  // namespace bench
