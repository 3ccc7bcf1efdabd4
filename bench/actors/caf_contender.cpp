// CAF 0.17's own middleman, as a user would pick instead: publish /
// remote_actor over TCP (BASP), the payload a std::vector<char> prebuilt
// once as a message (no per-send copy on the sender; BASP serializes it on
// the way out and deserializes it into a new vector on the way in). Same
// scheduler as riomesh's runtime: sharing, one worker per core.
#include "measure.hpp"
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
  cfg->set("scheduler.policy", caf::atom("sharing"));
  cfg->set("scheduler.max-threads", static_cast<std::size_t>(std::thread::hardware_concurrency()));
  cfg->set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

caf::behavior sink(caf::event_based_actor*, int) {
  return {
      [](std::uint64_t seq, const std::vector<char>&) { return seq; },
      [](std::uint64_t x) { return x; },
  };
}

}  // namespace

int caf_serve(int) {
  auto cfg = config();
  caf::actor_system sys{*cfg};
  auto s = sys.spawn(sink, 0);
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
  auto o =
      j.pattern == "rtt" ? drive_targets(sys, j, sinks, ping) : drive_targets(sys, j, sinks, post);
  print(o);
  return o.seconds > 0 ? 0 : 1;
}

}  // namespace bench
