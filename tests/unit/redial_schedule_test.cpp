#include <riomesh/actors/node/redial_schedule.hpp>

#include <doctest/doctest.h>

using namespace riomesh::actors;
using namespace std::chrono_literals;
using clock_type = redial_schedule::clock;

TEST_CASE("redial: at once, then doubling delays up to the cap, spread around them") {
  redial_schedule::limits l;
  l.first = 100ms;
  l.cap = 1000ms;
  l.spread = 0.2;
  redial_schedule s(l, 1);
  auto t = clock_type::time_point{} + 1h;
  s.add("broker", t);
  CHECK(s.due(t) == std::vector<std::string>{"broker"});
  CHECK(s.due(t).empty());  // dialing: not due twice
  std::chrono::milliseconds expected[] = {100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms};
  for (auto base : expected) {
    s.failed("broker", t);
    auto at = s.next(t);
    REQUIRE(at);
    auto wait = *at - t;
    CHECK(wait >= base * 8 / 10);
    CHECK(wait <= base * 12 / 10);
    CHECK(s.due(*at - 1ms).empty());
    CHECK(s.due(*at) == std::vector<std::string>{"broker"});
    t = *at;
  }
  CHECK(s.failures("broker") == 6);
}

TEST_CASE("redial: a connection that held resets the delay, a flapping one does not") {
  redial_schedule::limits l;
  l.first = 100ms;
  l.stable = 5s;
  l.spread = 0;
  redial_schedule s(l, 1);
  auto t = clock_type::time_point{} + 1h;
  s.add("p", t);
  s.due(t);
  s.failed("p", t);
  s.due(t + 100ms);
  s.failed("p", t + 100ms);  // second failure: 200 ms
  CHECK(*s.next(t) - (t + 100ms) == 200ms);
  s.due(t + 300ms);
  s.connected("p", t + 300ms);
  s.failed("p", t + 1s);  // lost after 700 ms: flapping, keeps counting
  CHECK(s.failures("p") == 3);
  CHECK(*s.next(t) - (t + 1s) == 400ms);
  s.due(t + 2s);
  s.connected("p", t + 2s);
  s.failed("p", t + 10s);  // held 8 s: starts over
  CHECK(s.failures("p") == 1);
  CHECK(*s.next(t) - (t + 10s) == 100ms);
  CHECK_FALSE(redial_schedule(l, 1).next(t));
}

TEST_CASE("redial: peers keep their own schedules") {
  redial_schedule::limits l;
  l.spread = 0;
  redial_schedule s(l, 1);
  auto t = clock_type::time_point{} + 1h;
  s.add("a", t);
  s.add("b", t);
  CHECK(s.due(t).size() == 2);
  s.connected("a", t);
  s.failed("b", t);
  CHECK(s.failures("a") == 0);
  CHECK(s.failures("b") == 1);
  CHECK(s.due(t + 100ms) == std::vector<std::string>{"b"});
}
