#include <riomesh/buffer_inspect.hpp>
#include <riomesh/message_codec.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>
#include <caf/message.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <map>

using namespace riomesh;

namespace test_msgs {

struct chunk {
  std::string name;
  buffer small, large;
  std::uint32_t seq = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chunk& x) {
  return f(caf::meta::type_name("test_msgs::chunk"), x.name, x.small, x.large, x.seq);
}

}  // namespace test_msgs

using test_msgs::chunk;

namespace {

struct system_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  system_fixture() {
    cfg.add_message_type<chunk>("test_msgs::chunk");
    cfg.set("scheduler.max-threads", 1);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

buffer filled(std::size_t n, unsigned char seed) {
  auto b = buffer::heap(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<unsigned char>(seed + i);
  return b;
}

bool same_bytes(const buffer& a, const buffer& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace

TEST_CASE_FIXTURE(system_fixture, "codec: large buffers are placed, small ones inline") {
  chunk c{"frame", filled(100, 1), filled(5000, 2), 7};
  auto msg = caf::make_message(c);
  encoded_message enc;
  std::string error;
  REQUIRE(encode_message(*sys, msg, 4096, enc, error));
  REQUIRE(enc.placed.size() == 1);
  CHECK(enc.placed[0].data() == c.large.data());  // the handle, not a copy
  CHECK(enc.body.size() < 300);                   // the large bytes are not in the body

  // The receiver's view of where the placed bytes landed: here, a copy
  // standing in for the arena region.
  buffer landed = buffer::copy_of(c.large.data(), c.large.size());
  caf::message out;
  REQUIRE(decode_message(
      *sys, enc.body.data(), enc.body.size(), 1,
      [&](std::size_t i) { return i == 0 ? landed : buffer{}; }, out, error));
  REQUIRE(out.match_elements<chunk>());
  const auto& got = out.get_as<chunk>(0);
  CHECK(got.name == "frame");
  CHECK(got.seq == 7);
  CHECK(same_bytes(got.small, c.small));
  CHECK(got.small.where() == buffer::origin::copy);
  CHECK(got.large.data() == landed.data());  // the view itself: no copy
}

TEST_CASE_FIXTURE(system_fixture,
                  "scatter-gather: a gathered buffer is placed whole, or goes inline as one run "
                  "of bytes that arrives contiguous") {
  auto large = buffer::gather({filled(3000, 1), filled(1, 9), filled(2000, 4)});
  auto small = buffer::gather({filled(10, 1), filled(20, 2)});
  chunk c{"g", small, large, 3};
  encoded_message enc;
  std::string error;
  REQUIRE(encode_message(*sys, caf::make_message(c), 4096, enc, error));
  REQUIRE(enc.placed.size() == 1);
  CHECK(enc.placed[0].gathered());  // its pieces go as they are
  CHECK(enc.placed[0].size() == 5001);
  buffer landed = enc.placed[0].flatten();
  caf::message out;
  REQUIRE(decode_message(
      *sys, enc.body.data(), enc.body.size(), 1,
      [&](std::size_t i) { return i == 0 ? landed : buffer{}; }, out, error));
  const auto& got = out.get_as<chunk>(0);
  CHECK_FALSE(got.small.gathered());
  CHECK(same_bytes(got.small, small.flatten()));
  CHECK(got.large.data() == landed.data());
}

TEST_CASE_FIXTURE(system_fixture, "codec: the threshold is inclusive, empty buffers inline") {
  chunk c{"t", buffer{}, filled(4096, 3), 1};
  encoded_message enc;
  std::string error;
  REQUIRE(encode_message(*sys, caf::make_message(c), 4096, enc, error));
  CHECK(enc.placed.size() == 1);
  enc = {};
  REQUIRE(encode_message(*sys, caf::make_message(c), 4097, enc, error));
  CHECK(enc.placed.empty());
}

TEST_CASE_FIXTURE(system_fixture, "codec: a body that lies about its buffers is refused") {
  chunk c{"x", filled(10, 1), filled(5000, 2), 1};
  encoded_message enc;
  std::string error;
  REQUIRE(encode_message(*sys, caf::make_message(c), 4096, enc, error));
  caf::message out;
  auto view = [](std::size_t) { return buffer::heap(5000); };
  // The envelope lists no placed buffer, the body refers to one.
  CHECK_FALSE(decode_message(*sys, enc.body.data(), enc.body.size(), 0, view, out, error));
  CHECK(error.find("placed buffer 0, but the envelope lists 0") != std::string::npos);
  // The envelope lists two, the body uses one.
  CHECK_FALSE(decode_message(*sys, enc.body.data(), enc.body.size(), 2, view, out, error));
  CHECK(error.find("placed buffer 1 is listed but the message has no place for it") !=
        std::string::npos);
  // Cut short.
  CHECK_FALSE(decode_message(*sys, enc.body.data(), enc.body.size() - 3, 1, view, out, error));
  CHECK(error.find("cannot decode") == 0);
  // Trailing bytes.
  auto longer = enc.body;
  longer.push_back(0);
  CHECK_FALSE(decode_message(*sys, longer.data(), longer.size(), 1, view, out, error));
  CHECK(error.find("1 bytes left") != std::string::npos);
}

TEST_CASE_FIXTURE(system_fixture, "codec: an unregistered type is an error, not an empty message") {
  // (CAF also prints its own complaint about the type to stderr.)
  encoded_message enc;
  std::string error;
  CHECK_FALSE(encode_message(*sys, caf::make_message(std::map<int, int>{{1, 2}}), 0, enc, error));
  CHECK(error.find("cannot encode") == 0);
}

TEST_CASE_FIXTURE(system_fixture, "codec: outside a riomesh codec the bytes go inline") {
  chunk c{"plain", filled(10, 1), filled(5000, 2), 3};
  std::vector<char> bytes;
  caf::binary_serializer sink{*sys, bytes};
  REQUIRE_FALSE(sink(c));
  CHECK(bytes.size() > 5000);
  chunk back;
  caf::binary_deserializer source{*sys, bytes};
  REQUIRE_FALSE(source(back));
  CHECK(same_bytes(back.large, c.large));
  CHECK(caf::deep_to_string(c).find("riomesh::buffer") != std::string::npos);
}
