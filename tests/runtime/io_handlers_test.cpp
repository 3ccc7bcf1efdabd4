// Handlers on the I/O thread (actors/io/io_executor.hpp): an actor that a
// delivery wakes runs there, one that takes too long goes to the CAF
// workers, and runtime.io_handler_limit: 0 leaves every handler to them.
#include "cluster.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;

namespace {

// Two nodes whose I/O threads judge a turn long past `limit`.
struct io_pair {
  std::unique_ptr<runtime> b, a;  // a dials b
  explicit io_pair(config::duration limit) {
    auto sb = node_settings("node-b");
    sb.runtime.io_handler_limit = limit;
    b = start_node(sb);
    auto sa = node_settings("node-a", {{"node-b", b->port()}});
    sa.runtime.io_handler_limit = limit;
    a = start_node(sa);
  }
  // `n` requests in turn to b's `name`, each answered.
  void ask(const std::string& name, int n) {
    auto c = a->remote_actor<calc_actor>("node-b", name, 10s);
    REQUIRE_MESSAGE(c, error_text(*a, c));
    caf::scoped_actor self{a->system()};
    for (int i = 0; i < n; ++i)
      self->request(*c, 10s, add_atom::value, i, 1)
          .receive([&](int r) { CHECK(r == i + 1); },
                   [&](caf::error& e) { FAIL(a->system().render(e)); });
  }
};

// A calculator that takes `pause` over each sum: a handler that computes.
calc_actor::behavior_type slow_calc(calc_actor::pointer, std::chrono::milliseconds pause) {
  return {[pause](add_atom, int x, int y) {
    std::this_thread::sleep_for(pause);
    return x + y;
  }};
}

// One that takes 5 ms over its first two sums only: as when the OS or a
// hypervisor takes the thread away mid-turn. (The counter is an argument:
// for a function spawned without arguments CAF 0.17 binds a reference to
// its empty argument tuple through a null pointer, which UBSan reports.)
calc_actor::behavior_type hiccup_calc(calc_actor::pointer,
                                      std::shared_ptr<std::atomic<int>> calls) {
  return {[calls](add_atom, int x, int y) {
    if (++*calls <= 2)
      std::this_thread::sleep_for(5ms);
    return x + y;
  }};
}

}  // namespace

TEST_CASE("io thread: an actor woken by a delivery runs on the I/O thread") {
  // A generous limit: this is about where handlers run, not how long is long
  // (under emulation in the VM a turn can take a millisecond).
  io_pair p(100ms);
  p.b->publish(spawn_calc(p.b->system()), "calc");
  p.ask("calc", 1);  // the first turn of everyone involved
  auto b0 = p.b->stats().node;
  constexpr int n = 200;
  p.ask("calc", n);
  auto b1 = p.b->stats().node;
  // Each request found the calculator idle: a turn on b's I/O thread each,
  // and no worker was woken for it.
  CHECK(b1.io_turns - b0.io_turns >= n);
  CHECK(b1.io_handed == b0.io_handed);
  CHECK(b1.mailbox_enqueues - b0.mailbox_enqueues == n);
}

TEST_CASE(
    "io thread: an actor whose turns take too long goes to the workers, for longer each time "
    "it comes back as slow") {
  io_pair p(1ms);
  p.b->publish(p.b->system().spawn(slow_calc, 20ms), "slow");
  p.b->publish(spawn_calc(p.b->system()), "calc");
  auto b0 = p.b->stats().node;
  p.ask("slow", 30);  // 600 ms of handlers
  auto b1 = p.b->stats().node;
  // Two long turns in a row, then it is the workers' for 10 ms, then 20,
  // 40 ... 320 ms, each return costing two more long turns (a request that
  // finds it still running on a worker needs no hand-over).
  auto heavy = b1.io_heavy - b0.io_heavy;
  MESSAGE(heavy, " long turns on the I/O thread, ", b1.io_handed - b0.io_handed, " handed over");
  CHECK(heavy % 2 == 0);
  CHECK(heavy >= 4);   // it came back after its first exile
  CHECK(heavy <= 12);  // and was away longer each time
  CHECK(b1.io_turns - b0.io_turns == heavy);
  CHECK(b1.io_handed - b0.io_handed >= 10);
  // Others still run on the I/O thread meanwhile.
  p.ask("calc", 10);
  CHECK(p.b->stats().node.io_turns - b1.io_turns >= 10);
}

TEST_CASE("io thread: an actor whose turns were long twice by chance is back within milliseconds") {
  io_pair p(1ms);
  p.b->publish(p.b->system().spawn(hiccup_calc, std::make_shared<std::atomic<int>>(0)), "hiccup");
  p.ask("hiccup", 2);
  auto b0 = p.b->stats().node;
  CHECK(b0.io_heavy >= 2);
  std::this_thread::sleep_for(50ms);  // past its first exile (10 ms)
  p.ask("hiccup", 50);
  auto b1 = p.b->stats().node;
  CHECK(b1.io_turns - b0.io_turns >= 50);
  CHECK(b1.io_handed == b0.io_handed);
}

TEST_CASE("io thread: runtime.io_handler_limit 0 leaves every handler to the workers") {
  io_pair p(config::duration::zero());
  p.b->publish(spawn_calc(p.b->system()), "calc");
  p.ask("calc", 50);
  auto b = p.b->stats().node;
  CHECK(b.io_turns == 0);
  CHECK(b.io_handed == 0);
  CHECK(b.messages_in >= 50);
}
