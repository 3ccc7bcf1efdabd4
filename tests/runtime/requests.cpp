// The runtime tests' blocking calls (they report failures to doctest, so
// they are not part of runtime_peer).
#include "cluster.hpp"

#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <algorithm>

namespace riomesh::test {

std::uint64_t sum_at(runtime& rt, const caf::actor& to, const buffer& data) {
  caf::scoped_actor self{rt.system()};
  std::uint64_t got = 0;
  self->request(to, std::chrono::seconds(60), sum_atom::value, data)
      .receive([&](std::uint64_t s) { got = s; },
               [&](caf::error& e) { FAIL("sum of ", data.size(), " B: ", rt.system().render(e)); });
  return got;
}

void check_mirrored(runtime& rt, const caf::actor& to, std::size_t size) {
  std::vector<char> data(size);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<char>(i * 2654435761u >> 13);
  caf::scoped_actor self{rt.system()};
  bool answered = false;
  self->request(to, std::chrono::seconds(120), data)
      .receive(
          [&](const std::vector<char>& back) {
            answered = true;
            REQUIRE(back.size() == data.size());
            CHECK(std::equal(back.begin(), back.end(), data.rbegin()));
          },
          [&](caf::error& e) { FAIL(rt.system().render(e)); });
  CHECK(answered);
}

std::future<caf::error> request_outcome(runtime& rt, const caf::actor& to) {
  auto outcome = std::make_shared<std::promise<caf::error>>();
  auto answered = outcome->get_future();
  spawn_fn(rt.system(), [outcome, to](caf::event_based_actor* self) {
    self->request(to, std::chrono::seconds(30), count_atom::value)
        .then([outcome](std::uint64_t, bool) { outcome->set_value(caf::error{}); },
              [outcome](caf::error& e) { outcome->set_value(e); });
  });
  return answered;
}

}  // namespace riomesh::test
