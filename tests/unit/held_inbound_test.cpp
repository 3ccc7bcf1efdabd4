// Messages held behind a node query (held_inbound.hpp): their order, the
// bound per link, and which answers count.
#include <riomesh/actors/peers/held_inbound.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace riomesh::actors;

namespace {

// A node id by its process number alone (its host id zero).
node_table::key key(std::uint32_t n) {
  return {n, {}};
}

}  // namespace

TEST_CASE("held inbound: what comes behind a held message waits behind it, in order") {
  held_inbound<std::string> h(8);
  std::string late = "before";
  CHECK(h.queue_behind(1, late) == held_inbound<std::string>::behind::none);
  CHECK(late == "before");  // nothing held: the caller's to deliver
  auto q = h.hold(1, "first", {key(7), key(9)});
  CHECK(q.id == 1);
  REQUIRE(q.asked.size() == 2);
  CHECK(q.asked[1] == key(9));
  std::string second = "second", third = "third";
  CHECK(h.queue_behind(1, second) == held_inbound<std::string>::behind::taken);
  CHECK(h.queue_behind(1, third) == held_inbound<std::string>::behind::taken);
  std::string other = "other link";
  CHECK(h.queue_behind(2, other) == held_inbound<std::string>::behind::none);
  CHECK(h.waiting(1) == 3);
  auto out = h.release(1);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == "first");
  CHECK(out[1] == "second");
  CHECK(out[2] == "third");
  CHECK_FALSE(h.holds(1));
}

TEST_CASE("held inbound: only the query a link waits on is answered, and a new one replaces it") {
  held_inbound<std::string> h(8);
  auto first = h.hold(1, "a", {key(1)});
  CHECK(h.asked(1, first.id) != nullptr);
  CHECK(h.asked(2, first.id) == nullptr);      // another link's answer
  CHECK(h.asked(1, first.id + 5) == nullptr);  // one nobody asked
  // Released and delivered, a message names an unknown node again: it
  // waits first, and what was released after it goes behind it.
  auto out = h.release(1);
  auto again = h.hold(1, std::move(out.front()), {key(2)});
  h.put_back(1, "b");
  CHECK(again.id != first.id);
  CHECK(h.asked(1, first.id) == nullptr);  // late: of no consequence
  REQUIRE(h.asked(1, again.id) != nullptr);
  CHECK(h.asked(1, again.id)->front() == key(2));
  auto now = h.release(1);
  REQUIRE(now.size() == 2);
  CHECK(now[0] == "a");
  CHECK(now[1] == "b");
}

TEST_CASE(
    "held inbound: at most max wait per link, and a query asks at most max_node_query nodes") {
  held_inbound<std::string> h(3);
  std::vector<node_table::key> many;
  for (std::uint32_t i = 0; i < max_node_query + 10; ++i)
    many.push_back(key(i));
  auto q = h.hold(4, "x", many);
  CHECK(q.asked.size() == max_node_query);
  std::string m = "y";
  CHECK(h.queue_behind(4, m) == held_inbound<std::string>::behind::taken);
  m = "z";
  CHECK(h.queue_behind(4, m) == held_inbound<std::string>::behind::taken);
  m = "past the bound";
  CHECK(h.queue_behind(4, m) == held_inbound<std::string>::behind::full);
  CHECK(m == "past the bound");  // left to the caller, who cuts the peer off
  h.drop(4);
  CHECK_FALSE(h.holds(4));
  CHECK(h.waiting(4) == 0);
}
