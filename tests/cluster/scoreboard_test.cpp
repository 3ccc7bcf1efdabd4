// The launcher's verdict: what it reads from the nodes' report lines and
// when it calls a run good. A run is only as trustworthy as this.
#include <summary.hpp>

#include <doctest/doctest.h>

#include <sstream>

using namespace pubsub::launch;

namespace {

void feed(scoreboard& b, const std::string& line) {
  auto e = parse_event(line);
  REQUIRE_MESSAGE(e, line);
  b.add(*e);
}

scoreboard three() {
  scoreboard b;
  b.expect("broker", "broker", "broker");
  b.expect("pub-1", "publisher", "pub-node");
  b.expect("sub-1", "subscriber", "sub-node-1");
  return b;
}

const std::string good_summary =
    "pubsub subscriber sub-1: summary messages=10 bytes=100 seconds=1.0 rate_mps=10.0 "
    "mib_s=0.0 p50_us=5.0 p99_us=9.0 copied_bytes=0 placed_bytes=100 gaps=0 duplicates=0 bad=0";

}  // namespace

TEST_CASE("report lines: role, actor, event and fields, anything else is not one") {
  auto e = parse_event("pubsub subscriber sub-1: gap publisher=pub-1 expected=4 got=6");
  REQUIRE(e);
  CHECK(e->role == "subscriber");
  CHECK(e->actor == "sub-1");
  CHECK(e->kind == "gap");
  CHECK(e->get("got") == "6");
  CHECK(e->get("missing").empty());
  CHECK(!parse_event("riomesh[broker] info: listening on 127.0.0.1:7481"));
  CHECK(!parse_event("pubsub subscriber sub-1 summary"));
  CHECK(!parse_event(""));
}

TEST_CASE("verdict: good only when every publisher is done and every subscriber is clean") {
  auto b = three();
  CHECK(!b.finished());
  feed(b, good_summary);
  CHECK(!b.finished());  // the publisher has not said done
  feed(b, "pubsub publisher pub-1: done messages=10 sent=10 seconds=1.0 rate_mps=10.0");
  CHECK(b.finished());
  CHECK(b.problems().empty());
  std::ostringstream table;
  b.print_table(table);
  CHECK(table.str().find("sub-1        subscriber        10") != std::string::npos);
}

TEST_CASE("verdict: gaps, bad checksums, an empty subscriber and a missing result fail") {
  auto gaps = three();
  feed(gaps, "pubsub subscriber sub-1: summary messages=10 gaps=2 bad=0");
  auto p = gaps.problems();
  REQUIRE(p.size() == 2);
  CHECK(p[0] == "pub-1: no result");
  CHECK(p[1] == "sub-1: gaps=2");

  auto bad = three();
  feed(bad, "pubsub subscriber sub-1: summary messages=0 gaps=0 bad=1");
  feed(bad, "pubsub publisher pub-1: done messages=10");
  p = bad.problems();
  REQUIRE(p.size() == 2);
  CHECK(p[0] == "sub-1: bad=1");
  CHECK(p[1] == "sub-1: received nothing");

  auto silent = three();
  feed(silent, "pubsub publisher pub-1: done messages=10");
  CHECK(silent.problems() == std::vector<std::string>{"sub-1: no result"});
}

TEST_CASE("verdict: gaps after a reported broker loss pass with gaps_after_loss, bad ones never") {
  auto lost = three();
  feed(lost, "pubsub publisher pub-1: done messages=10");
  feed(lost, "pubsub subscriber sub-1: broker_lost reason=node_lost");
  feed(lost, "pubsub subscriber sub-1: summary messages=8 gaps=2 bad=0");
  CHECK(lost.problems() == std::vector<std::string>{"sub-1: gaps=2"});
  CHECK(lost.problems({}, true).empty());

  auto unexplained = three();
  feed(unexplained, "pubsub publisher pub-1: done messages=10");
  feed(unexplained, "pubsub subscriber sub-1: summary messages=8 gaps=2 bad=0");
  CHECK(unexplained.problems({}, true) == std::vector<std::string>{"sub-1: gaps=2"});

  auto corrupt = three();
  feed(corrupt, "pubsub publisher pub-1: done messages=10");
  feed(corrupt, "pubsub subscriber sub-1: broker_lost reason=node_lost");
  feed(corrupt, "pubsub subscriber sub-1: summary messages=8 gaps=2 bad=3");
  CHECK(corrupt.problems({}, true) == std::vector<std::string>{"sub-1: bad=3"});
}

TEST_CASE("verdict: a subscriber started again after its streams ended may receive nothing") {
  auto told = three();
  feed(told, "pubsub publisher pub-1: done messages=10");
  told.restarted("sub-node-1");
  feed(told, "pubsub subscriber sub-1: stream_ended publisher=pub-1 total=10");
  feed(told, "pubsub subscriber sub-1: summary messages=0 gaps=0 bad=0");
  CHECK(told.problems().empty());

  // Not restarted, or not told: nothing received still fails.
  auto never_restarted = three();
  feed(never_restarted, "pubsub publisher pub-1: done messages=10");
  feed(never_restarted, "pubsub subscriber sub-1: stream_ended publisher=pub-1 total=10");
  feed(never_restarted, "pubsub subscriber sub-1: summary messages=0 gaps=0 bad=0");
  CHECK(never_restarted.problems() == std::vector<std::string>{"sub-1: received nothing"});
  auto not_told = three();
  feed(not_told, "pubsub publisher pub-1: done messages=10");
  not_told.restarted("sub-node-1");
  feed(not_told, "pubsub subscriber sub-1: summary messages=0 gaps=0 bad=0");
  CHECK(not_told.problems() == std::vector<std::string>{"sub-1: received nothing"});
}

TEST_CASE(
    "verdict: a subscriber back from a loss only after its stream ended may receive nothing") {
  // Lost its broker before the first sample, back after the last: where
  // gaps after a loss are allowed, it finished as it should.
  auto lost = three();
  feed(lost, "pubsub publisher pub-1: done messages=10");
  feed(lost, "pubsub subscriber sub-1: broker_lost reason=node_lost");
  feed(lost, "pubsub subscriber sub-1: stream_ended publisher=pub-1 total=10");
  feed(lost, "pubsub subscriber sub-1: summary messages=0 gaps=0 bad=0");
  CHECK(lost.problems({}, true).empty());
  // Not where gaps are allowed, and not when it was never told.
  CHECK(lost.problems() == std::vector<std::string>{"sub-1: received nothing"});
  auto not_told = three();
  feed(not_told, "pubsub publisher pub-1: done messages=10");
  feed(not_told, "pubsub subscriber sub-1: broker_lost reason=node_lost");
  feed(not_told, "pubsub subscriber sub-1: summary messages=0 gaps=0 bad=0");
  CHECK(not_told.problems({}, true) == std::vector<std::string>{"sub-1: received nothing"});
}

TEST_CASE("verdict: an expected event must have been reported, and a restart clears results") {
  auto b = three();
  feed(b, good_summary);
  feed(b, "pubsub publisher pub-1: done messages=10");
  feed(b, "pubsub publisher pub-1: broker_lost reason=x");
  CHECK(b.problems("pub-1:broker_lost").empty());
  CHECK(b.problems("pub-1:broker_lost,sub-1:broker_back") ==
        std::vector<std::string>{"sub-1 never reported broker_back"});
  // "!event": the run fails if it was reported.
  CHECK(b.problems("sub-1:!broker_lost").empty());
  CHECK(b.problems("pub-1:!broker_lost") == std::vector<std::string>{"pub-1 reported broker_lost"});
  b.restarted("sub-node-1");
  CHECK(!b.finished());
  CHECK(b.problems() == std::vector<std::string>{"sub-1: no result"});
}

TEST_CASE("verdict: what actors report while the launcher stops them all counts for nothing") {
  auto b = three();
  feed(b, good_summary);
  feed(b, "pubsub publisher pub-1: done messages=10");
  b.stopping();
  // Every node gets SIGTERM at once: the broker may go first, and its
  // subscribers say so. That is the launcher's doing, not the run's.
  feed(b, "pubsub subscriber sub-1: broker_lost reason=user_shutdown");
  CHECK(b.problems("sub-1:!broker_lost").empty());
  CHECK(b.problems("sub-1:broker_lost") ==
        std::vector<std::string>{"sub-1 never reported broker_lost"});
  std::ostringstream table;
  b.print_table(table);
  CHECK(table.str().find("sub-1: broker_lost (while stopping)") != std::string::npos);
}

TEST_CASE("the run's clock starts when a publisher says it is sending, not at a subscriber's") {
  auto b = three();
  CHECK_FALSE(b.sending());
  feed(b, "pubsub subscriber sub-1: sending subscribers=1");
  CHECK_FALSE(b.sending());
  feed(b, "pubsub publisher pub-1: sending subscribers=1");
  CHECK(b.sending());
  b.restarted("pub-node");
  CHECK(b.sending());  // the clock does not start over with a restarted publisher
}
