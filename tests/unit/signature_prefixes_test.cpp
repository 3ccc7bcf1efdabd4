// Messages written through a signature_prefixes table: byte for byte what
// CAF's own message::save writes, the same error for an unknown type, a
// bounded table, and one table shared by threads that encode at once.
#include <riomesh/message_codec.hpp>
#include <riomesh/signature_prefixes.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/serializer_impl.hpp>

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace riomesh;

namespace prefix_msgs {

struct reading {
  std::int32_t sensor = 0;
  std::vector<std::string> notes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reading& r) {
  return f(caf::meta::type_name("prefix_msgs::reading"), r.sensor, r.notes);
}

}  // namespace prefix_msgs

using prefix_msgs::reading;

namespace {

struct system_with_reading {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  system_with_reading() {
    cfg.set("scheduler.max-threads", 1);
    cfg.add_message_type<reading>("prefix_msgs::reading");
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

// What CAF itself writes for `m`.
std::vector<unsigned char> by_caf(caf::actor_system& sys, const caf::message& m) {
  std::vector<unsigned char> bytes;
  caf::serializer_impl<std::vector<unsigned char>> sink{sys.dummy_execution_unit(), bytes};
  REQUIRE_FALSE(m.save(sink));
  return bytes;
}

std::vector<unsigned char> through(caf::actor_system& sys, const caf::message& m,
                                   detail::signature_prefixes& p) {
  encoded_message enc;
  std::string error;
  REQUIRE(encode_message(sys, m, 1u << 30, enc, error, nullptr, &p));
  return enc.body;
}

}  // namespace

TEST_CASE("a kept signature writes what CAF writes, for every kind of element") {
  system_with_reading s;
  detail::signature_prefixes p{*s.sys};
  std::vector<caf::message> msgs{
      caf::make_message(std::uint64_t{42}),
      caf::make_message(caf::atom("put"), std::string{"key"}, std::int32_t{-7}),
      caf::make_message(reading{3, {"warm", "dry"}}),
      caf::make_message(reading{}, std::vector<char>{'a', 'b'}, 2.5),
      caf::make_message(std::string(300, 'x')),
  };
  for (int round = 0; round < 2; ++round)  // made, then found
    for (const auto& m : msgs) {
      CAPTURE(round);
      CAPTURE(to_string(m));
      CHECK(through(*s.sys, m, p) == by_caf(*s.sys, m));
    }
  CHECK(p.size() == msgs.size());
  // Same types, other values: the one signature.
  CHECK(through(*s.sys, caf::make_message(std::uint64_t{7}), p) ==
        by_caf(*s.sys, caf::make_message(std::uint64_t{7})));
  CHECK(p.size() == msgs.size());
}

TEST_CASE("what is not kept is CAF's to write: empty, long, and unknown types") {
  system_with_reading s;
  detail::signature_prefixes p{*s.sys};
  CHECK(p.find(caf::message{}) == nullptr);
  CHECK(through(*s.sys, caf::message{}, p) == by_caf(*s.sys, caf::message{}));
  auto nine = caf::make_message(1, 2, 3, 4, 5, 6, 7, 8, 9);
  CHECK(p.find(nine) == nullptr);
  CHECK(through(*s.sys, nine, p) == by_caf(*s.sys, nine));
  // A type the system was not given fails as CAF's save fails, every time.
  encoded_message enc;
  std::string error;
  for (int i = 0; i < 2; ++i) {
    CHECK_FALSE(encode_message(*s.sys, caf::make_message(std::map<int, int>{{1, 2}}), 0, enc, error,
                               nullptr, &p));
    CHECK(error.find("cannot encode") != std::string::npos);
  }
  CHECK(p.size() == 0);
}

TEST_CASE("the table keeps at most max_signatures, and writes the rest as CAF does") {
  system_with_reading s;
  detail::signature_prefixes p{*s.sys};
  // 65 signatures: 1 to 8 elements of one of 8 types, and a byte vector.
  const caf::message ones[] = {
      caf::make_message(std::int8_t{1}),   caf::make_message(std::int16_t{1}),
      caf::make_message(std::int32_t{1}),  caf::make_message(std::int64_t{1}),
      caf::make_message(std::uint8_t{1}),  caf::make_message(std::uint16_t{1}),
      caf::make_message(std::uint32_t{1}), caf::make_message(std::string{"s"})};
  std::vector<caf::message> msgs;
  for (std::size_t n = 1; n <= 8; ++n) {
    msgs.push_back(caf::make_message(std::vector<char>(n, 'a')));
    for (const auto& one : ones) {
      caf::message m;
      for (std::size_t i = 0; i < n; ++i)
        m = m + one;
      msgs.push_back(m);
    }
  }
  for (const auto& m : msgs)
    CHECK(through(*s.sys, m, p) == by_caf(*s.sys, m));
  CHECK(p.size() == detail::signature_prefixes::max_signatures);
  for (const auto& m : msgs)
    CHECK(through(*s.sys, m, p) == by_caf(*s.sys, m));
}

TEST_CASE("threads that encode at once share one table and write CAF's bytes") {
  system_with_reading s;
  detail::signature_prefixes p{*s.sys};
  std::vector<caf::message> msgs{
      caf::make_message(std::uint64_t{1}), caf::make_message(std::string{"a"}, 2),
      caf::make_message(reading{1, {"n"}}), caf::make_message(caf::atom("x"), 1.5),
      caf::make_message(std::int16_t{3}, std::int16_t{4})};
  std::vector<std::vector<unsigned char>> expected;
  for (const auto& m : msgs)
    expected.push_back(by_caf(*s.sys, m));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        auto k = static_cast<std::size_t>(i + t) % msgs.size();
        encoded_message enc;
        std::string error;
        if (!encode_message(*s.sys, msgs[k], 1u << 30, enc, error, nullptr, &p) ||
            enc.body != expected[k])
          ++wrong[t];
      }
    });
  for (auto& th : threads)
    th.join();
  for (int t = 0; t < 4; ++t)
    CHECK(wrong[t] == 0);
  CHECK(p.size() == msgs.size());
}
