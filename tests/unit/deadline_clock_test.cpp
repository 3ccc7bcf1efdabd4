// The deadline clock that riomesh's scheduler puts in place of CAF's:
// timeouts and delayed messages still fall due on time, a stream of
// requests does not wake the clock's thread per request, and an ended
// actor's timeouts go with it.
#include <riomesh/actors/scheduler.hpp>
#include <riomesh/actors/scheduler/deadline_clock.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <vector>

using namespace riomesh;
using namespace std::chrono_literals;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  actors::deadline_clock* clock = nullptr;

  fixture() {
    actors::apply(config::runtime_settings{}, cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    clock = dynamic_cast<actors::deadline_clock*>(&sys->clock());
    REQUIRE(clock != nullptr);
  }
};

// Every actor here takes an argument: CAF 0.17 binds a null reference
// (UBSan reports it) when a function actor is spawned without one.
caf::behavior echo(caf::event_based_actor*, int offset) {
  return {[offset](int x) { return x + offset; }};
}

// Takes requests and never answers them: it keeps their promises.
struct silent_state {
  std::vector<caf::response_promise> kept;
};

caf::behavior silent(caf::stateful_actor<silent_state>* self, std::size_t expected) {
  self->state.kept.reserve(expected);
  return {[self](int) {
    self->state.kept.push_back(self->make_response_promise());
    return self->state.kept.back();
  }};
}

// Sends `n` requests to `to` with a minute's timeout, and waits.
caf::behavior asking(caf::event_based_actor* self, caf::actor to, int n) {
  for (int i = 0; i < n; ++i)
    self->request(to, 60s, i).then([](int) {}, [](caf::error&) {});
  return {[](caf::exit_msg&) {}};
}

template <class Predicate>
bool eventually(Predicate f) {
  for (int i = 0; i < 1000; ++i) {
    if (f())
      return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

}  // namespace

TEST_CASE("deadline clock: a request nobody answers gets its timeout error on time") {
  fixture f;
  auto quiet = f.sys->spawn(silent, std::size_t{1});
  caf::scoped_actor self{*f.sys};
  auto start = std::chrono::steady_clock::now();
  caf::error got;
  self->request(quiet, 100ms, 1)
      .receive([](int) { FAIL("the silent actor answered"); },
               [&](caf::error& e) { got = std::move(e); });
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(got == caf::sec::request_timeout);
  CHECK(took >= 100ms);
  CHECK(took < 5s);
  self->send_exit(quiet, caf::exit_reason::user_shutdown);
}

TEST_CASE("deadline clock: a stream of requests with one timeout wakes its thread once") {
  fixture f;
  auto e = f.sys->spawn(echo, 1);
  caf::scoped_actor self{*f.sys};
  auto before = f.clock->wakes();
  constexpr int requests = 2000;
  int answered = 0;
  for (int i = 0; i < requests; ++i)
    self->request(e, 60s, i).receive([&](int x) { answered += x == i + 1; },
                                     [](caf::error&) { FAIL("a request failed"); });
  CHECK(answered == requests);
  // The first deadline wakes the thread to sleep towards it; every later
  // one falls due after it. CAF's own clock woke its thread per request.
  CHECK(f.clock->wakes() - before <= 1);
  // CAF 0.17 leaves an answered request's timeout in the schedule until it
  // falls due: the clock holds them, and they go when the actor ends.
  CHECK(f.clock->pending() >= requests);
  self->send_exit(e, caf::exit_reason::user_shutdown);
}

TEST_CASE("deadline clock: an earlier deadline wakes the thread sleeping towards a later one") {
  fixture f;
  auto quiet = f.sys->spawn(silent, std::size_t{1});
  // The thread now sleeps towards a deadline a minute away.
  auto asker = f.sys->spawn(asking, quiet, 1);
  REQUIRE(eventually([&] { return f.clock->pending() == 1; }));
  caf::scoped_actor self{*f.sys};
  auto start = std::chrono::steady_clock::now();
  self->delayed_send(self, 50ms, 7);
  int got = 0;
  self->receive([&](int x) { got = x; }, caf::after(10s) >> [] {});
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(got == 7);
  CHECK(took >= 50ms);
  CHECK(took < 5s);
  self->send_exit(asker, caf::exit_reason::user_shutdown);
  self->send_exit(quiet, caf::exit_reason::user_shutdown);
}

TEST_CASE("deadline clock: an actor's timeouts end with it") {
  fixture f;
  auto quiet = f.sys->spawn(silent, std::size_t{1});
  auto asker = f.sys->spawn(asking, quiet, 10);
  REQUIRE(eventually([&] { return f.clock->pending() == 10; }));
  caf::scoped_actor self{*f.sys};
  self->send_exit(asker, caf::exit_reason::user_shutdown);
  self->wait_for(asker);
  CHECK(eventually([&] { return f.clock->pending() == 0; }));
  self->send_exit(quiet, caf::exit_reason::user_shutdown);
}
