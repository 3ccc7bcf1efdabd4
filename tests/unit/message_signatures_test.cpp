// Messages read through a message_signatures cache: the same messages as
// CAF's own loader makes, the same errors, and a bounded table.
#include <riomesh/buffer_inspect.hpp>
#include <riomesh/message_codec.hpp>
#include <riomesh/message_signatures.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace riomesh;

namespace sig_msgs {

struct point {
  std::int32_t x = 0, y = 0;
  std::vector<std::string> tags;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, point& p) {
  return f(caf::meta::type_name("sig_msgs::point"), p.x, p.y, p.tags);
}

}  // namespace sig_msgs

using sig_msgs::point;

namespace {

struct systems {
  caf::actor_system_config cfg, other_cfg;
  std::unique_ptr<caf::actor_system> sys, other;  // other: knows point, sys does not
  systems() {
    cfg.set("scheduler.max-threads", 1);
    other_cfg.set("scheduler.max-threads", 1);
    other_cfg.add_message_type<point>("sig_msgs::point");
    sys = std::make_unique<caf::actor_system>(cfg);
    other = std::make_unique<caf::actor_system>(other_cfg);
  }
};

std::vector<unsigned char> encoded(caf::actor_system& sys, const caf::message& m) {
  encoded_message enc;
  std::string error;
  REQUIRE(encode_message(sys, m, 1u << 30, enc, error));
  return enc.body;
}

bool decode(caf::actor_system& sys, const std::vector<unsigned char>& body, caf::message& out,
            std::string& error, detail::message_signatures* s) {
  return decode_message(
      sys, body.data(), body.size(), 0, [](std::size_t) { return buffer{}; }, out, error, nullptr,
      nullptr, s);
}

// A message of `n` elements 0..n-1 of type T (CAF's name `type`), as CAF
// writes one: a signature per type and n.
template <class T>
std::vector<unsigned char> numbers(caf::actor_system& sys, const char* type, std::size_t n) {
  std::string name = "@<>";
  for (std::size_t i = 0; i < n; ++i)
    name += std::string{"+"} + type;
  std::vector<char> bytes;
  caf::binary_serializer sink{sys, bytes};
  std::uint16_t zero = 0;
  REQUIRE_FALSE(sink.begin_object(zero, name));
  for (std::size_t i = 0; i < n; ++i) {
    auto x = static_cast<T>(i);
    REQUIRE_FALSE(sink(x));
  }
  REQUIRE_FALSE(sink.end_object());
  return {bytes.begin(), bytes.end()};
}

std::vector<unsigned char> u64s(caf::actor_system& sys, std::size_t n) {
  return numbers<std::uint64_t>(sys, "@u64", n);
}

}  // namespace

TEST_CASE_FIXTURE(systems, "signatures: the messages CAF's loader makes, first and every time") {
  detail::message_signatures signatures{*other};
  point p{3, -4, {"a", "bc"}};
  auto body = encoded(*other, caf::make_message(std::uint64_t{42}, std::string{"hi"}, p));
  for (int round = 0; round < 3; ++round) {
    caf::message fast, slow;
    std::string e1, e2;
    REQUIRE(decode(*other, body, fast, e1, &signatures));
    REQUIRE(decode(*other, body, slow, e2, nullptr));
    REQUIRE(fast.match_elements<std::uint64_t, std::string, point>());
    CHECK(fast.get_as<std::uint64_t>(0) == 42);
    CHECK(fast.get_as<std::string>(1) == "hi");
    const auto& q = fast.get_as<point>(2);
    CHECK(q.x == 3);
    CHECK(q.y == -4);
    CHECK(q.tags == std::vector<std::string>{"a", "bc"});
    CHECK(fast.type_token() == slow.type_token());
  }
  CHECK(signatures.size() == 1);
  // A value's default is copied, not the last message's: an empty vector
  // stays empty.
  auto empty = encoded(*other, caf::make_message(point{1, 2, {}}));
  caf::message m;
  std::string error;
  REQUIRE(decode(*other, empty, m, error, &signatures));
  CHECK(m.get_as<point>(0).tags.empty());
  // No elements at all.
  REQUIRE(decode(*other, encoded(*other, caf::message{}), m, error, &signatures));
  CHECK(m.empty());
}

TEST_CASE_FIXTURE(systems, "signatures: what the system does not know fails as with CAF's loader") {
  detail::message_signatures signatures{*sys};
  auto body = encoded(*other, caf::make_message(point{1, 2, {"x"}}));
  caf::message m;
  std::string fast, slow;
  CHECK_FALSE(decode(*sys, body, m, fast, &signatures));
  CHECK_FALSE(decode(*sys, body, m, slow, nullptr));
  CHECK(fast == slow);
  CHECK(fast.find("cannot decode") == 0);
  CHECK(signatures.size() == 0);
  // Cut short after a known signature: an error, not a message.
  auto numbers = u64s(*sys, 3);
  numbers.resize(numbers.size() - 4);
  CHECK_FALSE(decode(*sys, numbers, m, fast, &signatures));
  CHECK(fast.find("cannot decode") == 0);
}

TEST_CASE_FIXTURE(systems, "signatures: a peer cannot grow the table past its bound") {
  using sigs = detail::message_signatures;
  sigs signatures{*sys};
  auto check = [&](const std::vector<unsigned char>& body, std::size_t n) {
    caf::message m;
    std::string error;
    REQUIRE(decode(*sys, body, m, error, &signatures));
    REQUIRE(m.size() == n);
  };
  // Kept once a message of it loaded: not a signature whose message failed.
  auto cut = u64s(*sys, 3);
  cut.resize(cut.size() - 4);
  caf::message m;
  std::string error;
  CHECK_FALSE(decode(*sys, cut, m, error, &signatures));
  CHECK(signatures.size() == 0);
  // Long ones are read every time by CAF's loader, never kept.
  check(u64s(*sys, sigs::max_elements + 1), sigs::max_elements + 1);
  CHECK(signatures.size() == 0);
  // More short ones than the table holds: all read right, the table full.
  for (int round = 0; round < 2; ++round)
    for (std::size_t n = 1; n <= sigs::max_elements; ++n) {
      check(u64s(*sys, n), n);
      check(numbers<std::uint32_t>(*sys, "@u32", n), n);
      check(numbers<std::uint16_t>(*sys, "@u16", n), n);
    }
  CHECK(signatures.size() == sigs::max_signatures);
  check(u64s(*sys, 2), 2);
}

TEST_CASE_FIXTURE(systems, "signatures: a start cut anywhere or lying fails as with CAF's loader") {
  detail::message_signatures signatures{*sys};
  REQUIRE(signatures.reads_in_place());  // or this case tests CAF against itself
  // 30 elements: a name of 153 bytes, whose length takes two bytes.
  for (std::size_t n : {std::size_t{1}, std::size_t{30}}) {
    auto whole = u64s(*sys, n);
    caf::message m;
    std::string fast, slow;
    for (std::size_t size = 0; size < whole.size(); ++size) {
      CAPTURE(n);
      CAPTURE(size);
      std::vector<unsigned char> cut(whole.begin(), whole.begin() + size);
      CHECK_FALSE(decode(*sys, cut, m, fast, &signatures));
      CHECK_FALSE(decode(*sys, cut, m, slow, nullptr));
      CHECK(fast == slow);
    }
    REQUIRE(decode(*sys, whole, m, fast, &signatures));
    CHECK(m.size() == n);
    // A name longer than what follows it (its last length group made
    // large); a length in more groups than a 32-bit one takes; a type
    // number where a name should be.
    auto longer = whole, endless = whole, numbered = whole;
    longer[n == 1 ? 2 : 3] = 0x7f;
    endless.insert(endless.begin() + 2, 5, 0x80);
    numbered[1] = 1;
    for (const auto* lie : {&longer, &endless, &numbered}) {
      CHECK_FALSE(decode(*sys, *lie, m, fast, &signatures));
      CHECK_FALSE(decode(*sys, *lie, m, slow, nullptr));
      CHECK(fast == slow);
    }
  }
  CHECK(signatures.size() == 2);
}
