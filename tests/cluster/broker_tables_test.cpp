// The broker's tables (topic_table.hpp) and its report lines: whatever
// peers name, no table grows past its bound and no line breaks in two.
#include <report.hpp>
#include <topic_table.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace pubsub;

namespace {

struct fake_member {
  int who = 0;
  std::string name;
};

std::string names(const std::vector<fake_member>& members) {
  std::string out;
  for (const auto& m : members)
    out += m.name + ";";
  return out;
}

}  // namespace

TEST_CASE("broker tables: joins past max_topics or max_subscribers are refused, known ones kept") {
  using table = topic_table<fake_member>;
  table t{topic_limits{2, 2, 8}};
  CHECK(t.join("a", {1, "s1"}) == table::joined::added);
  CHECK(t.join("a", {1, "s1 again"}) == table::joined::known);
  CHECK(t.join("a", {2, "s2"}) == table::joined::added);
  CHECK(t.join("a", {3, "s3"}) == table::joined::no_subscriber_room);
  CHECK(t.join("b", {3, "s3"}) == table::joined::added);
  CHECK(t.join("c", {4, "s4"}) == table::joined::no_topic_room);
  CHECK(t.topics() == 2);
  CHECK(names(t.members("a")) == "s1;s2;");
  CHECK(t.count("c") == 0);
  // A post to a topic nobody subscribed to makes no entry.
  CHECK(t.members("d").empty());
  CHECK(t.topics() == 2);
  // No room for anyone: no topic is made for the refused.
  table none{topic_limits{2, 0, 8}};
  CHECK(none.join("a", {1, "s1"}) == table::joined::no_subscriber_room);
  CHECK(none.topics() == 0);
}

TEST_CASE("broker tables: a subscriber dropped leaves every topic, an empty topic frees its room") {
  using table = topic_table<fake_member>;
  table t{topic_limits{2, 4, 8}};
  t.join("a", {1, "s1"});
  t.join("a", {2, "s2"});
  t.join("b", {1, "s1"});
  std::string gone;
  t.drop(
      [](const fake_member& m) { return m.who == 1; },
      [&](const std::string& topic, const fake_member& m) { gone += topic + ":" + m.name + ";"; });
  CHECK(gone == "a:s1;b:s1;");
  CHECK(names(t.members("a")) == "s2;");
  CHECK(t.topics() == 1);
  CHECK(t.join("c", {3, "s3"}) == table::joined::added);
}

TEST_CASE(
    "broker tables: ended streams are remembered per topic, the oldest forgotten past the bound") {
  topic_table<fake_member> t{topic_limits{4, 4, 3}};
  t.ended("a", "p1", 1, 10);
  t.ended("b", "p1", 1, 20);
  t.ended("a", "p2", 1, 30);
  REQUIRE(t.ended_on("a").size() == 2);
  CHECK(t.ended_on("a")[1].total == 30);
  // The same stream ending again (a publisher run again) is one entry, the newest.
  t.ended("a", "p1", 2, 11);
  auto a = t.ended_on("a");
  REQUIRE(a.size() == 2);
  CHECK(a[0].publisher == "p2");
  CHECK(a[1].total == 11);
  t.ended("c", "p9", 1, 1);  // a fourth: b's, the oldest, goes
  CHECK(t.ended_on("b").empty());
  CHECK(t.ended_on("c").size() == 1);
  topic_table<fake_member> none{topic_limits{4, 4, 0}};
  none.ended("a", "p1", 1, 1);
  CHECK(none.ended_on("a").empty());
}

TEST_CASE("broker tables: a post of a new run makes an ended stream live again") {
  topic_table<fake_member> t{topic_limits{4, 4, 2}};
  t.ended("a", "p1", 7, 10);
  t.ended("a", "p2", 7, 10);
  t.posted("a", "p1", 7);  // a post of the run that ended (sent again): still ended
  CHECK(t.ended_on("a").size() == 2);
  t.posted("b", "p1", 8);  // another topic's stream of the same name
  CHECK(t.ended_on("a").size() == 2);
  t.posted("a", "p1", 8);  // p1 started again
  auto a = t.ended_on("a");
  REQUIRE(a.size() == 1);
  CHECK(a[0].publisher == "p2");
  // Its room is free: two more fit before p2's entry, the oldest, goes.
  t.ended("a", "p1", 8, 5);
  CHECK(t.ended_on("a").size() == 2);
  t.ended("c", "p3", 1, 1);
  a = t.ended_on("a");
  REQUIRE(a.size() == 1);
  CHECK(a[0].publisher == "p1");
  CHECK(a[0].run == 8);
  CHECK(a[0].total == 5);
}

TEST_CASE("report lines: a peer's name or value cannot end the line and start one of its own") {
  auto line = report_line(
      "broker", "b1", "subscriber_joined",
      {{"name", "x\npubsub subscriber sub-1: summary messages=99"}, {"topic", "t\\1\r"}});
  CHECK(line ==
        "pubsub broker b1: subscriber_joined name=x\\x0apubsub subscriber sub-1: summary "
        "messages=99 topic=t\\x5c1\\x0d\n");
  CHECK(line.find('\n') == line.size() - 1);
  CHECK(report_line("subscriber", "evil\nname", "ready", {}) ==
        "pubsub subscriber evil\\x0aname: ready\n");
}
