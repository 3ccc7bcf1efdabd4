// The callback a queued message carries to tell its sender it did not go:
// called with what it was given, copied and moved like std::function, its
// captures destroyed exactly once, inline when small, on the heap when not.
#include <riomesh/actors/connection/send_failure.hpp>

#include <doctest/doctest.h>

#include <array>
#include <functional>
#include <memory>
#include <string>

using riomesh::actors::failure_callback;
using riomesh::actors::send_failure;

namespace {

// Counts its live copies through the shared count it holds.
struct probe {
  std::shared_ptr<int> live;
  explicit probe(std::shared_ptr<int> n) : live(std::move(n)) { ++*live; }
  probe(const probe& o) : live(o.live) { ++*live; }
  probe(probe&& o) noexcept : live(o.live) { ++*live; }
  ~probe() { --*live; }
};

struct small_call {
  probe p;
  std::string* seen;
  void operator()(send_failure f, const std::string& why) const {
    *seen = std::to_string(static_cast<int>(f)) + ":" + why;
  }
};

struct large_call {
  probe p;
  std::string* seen;
  std::array<char, 200> padding{};
  void operator()(send_failure, const std::string& why) const { *seen = "large:" + why; }
};

}  // namespace

TEST_CASE("failure callback: a null function pointer or an empty function makes an empty one") {
  void (*none)(send_failure, const std::string&) = nullptr;
  CHECK_FALSE(failure_callback{none});
  CHECK_FALSE(failure_callback{std::function<void(send_failure, const std::string&)>{}});
  CHECK(failure_callback{[](send_failure, const std::string&) {}});
}

TEST_CASE("failure callback: a proxy's 48 bytes stay inline, larger ones go to the heap") {
  struct proxy_sized {
    std::weak_ptr<int> me;
    std::uint64_t wait;
    void* sender;
    std::uint64_t mid;
    void* proxy;
    void operator()(send_failure, const std::string&) const {}
  };
  static_assert(sizeof(proxy_sized) == 48);
  CHECK(failure_callback::stored_inline<proxy_sized>);
  CHECK(failure_callback::stored_inline<small_call>);
  CHECK_FALSE(failure_callback::stored_inline<large_call>);
  CHECK(sizeof(failure_callback) == 64);
}

TEST_CASE("failure callback: empty, called, copied, moved, reset, its captures freed once") {
  for (bool large : {false, true}) {
    CAPTURE(large);
    auto live = std::make_shared<int>(0);
    std::string seen;
    {
      failure_callback empty;
      CHECK_FALSE(empty);
      failure_callback cb = large ? failure_callback{large_call{probe{live}, &seen}}
                                  : failure_callback{small_call{probe{live}, &seen}};
      REQUIRE(cb);
      CHECK(*live == 1);
      cb(send_failure::node_lost, "gone");
      CHECK(seen ==
            (large ? "large:gone" : std::to_string(int(send_failure::node_lost)) + ":gone"));

      failure_callback copy = cb;
      CHECK(*live == 2);
      failure_callback moved = std::move(cb);
      CHECK_FALSE(cb);  // a moved-from callback is empty: nobody is told twice
      CHECK(*live == 2);
      seen.clear();
      moved(send_failure::stopped, "x");
      CHECK_FALSE(seen.empty());

      empty = copy;  // copy assignment
      CHECK(*live == 3);
      empty = std::move(moved);  // move assignment over a full one
      CHECK(*live == 2);
      CHECK_FALSE(moved);
      copy = nullptr;
      CHECK_FALSE(copy);
      CHECK(*live == 1);
      auto& same = empty;
      empty = same;  // self-assignment, copy and move, keeps it
      empty = std::move(same);
      CHECK(empty);
      CHECK(*live == 1);
    }
    CHECK(*live == 0);
  }
}
