// The I/O thread's poll length (actors/io/spin_budget.hpp), from the quiet
// gaps it is shown.
#include <riomesh/actors/io/spin_budget.hpp>

#include <doctest/doctest.h>

using namespace riomesh::actors;
using namespace std::chrono_literals;

namespace {

// Shows `b` one quiet gap of `gap` starting at `t`; the time after it.
spin_budget::clock::time_point gap(spin_budget& b, spin_budget::clock::time_point t,
                                   std::chrono::nanoseconds gap) {
  b.went_quiet(t);
  b.went_quiet(t + gap / 2);  // still the same gap
  b.moved(t + gap);
  return t + gap + 1us;
}

}  // namespace

TEST_CASE("spin budget: replies that keep coming within the most it may poll are waited for") {
  spin_budget b(50us, 1ms);
  auto t = spin_budget::clock::time_point{} + 1s;
  CHECK(b.spin() == 50us);
  for (int i = 0; i < 3; ++i)
    t = gap(b, t, 400us);
  CHECK(b.spin() == 50us);  // four gaps first
  t = gap(b, t, 400us);
  CHECK(b.spin() == 1ms);
  // One long silence among four does not undo it; two do.
  t = gap(b, t, 5s);
  CHECK(b.spin() == 1ms);
  t = gap(b, t, 5s);
  CHECK(b.spin() == 50us);
  // Gaps just past the most are not waited for.
  for (int i = 0; i < 4; ++i)
    t = gap(b, t, 1001us);
  CHECK(b.spin() == 50us);
  for (int i = 0; i < 4; ++i)
    t = gap(b, t, 1ms);
  CHECK(b.spin() == 1ms);
  CHECK(b.least() == 50us);
}

TEST_CASE("spin budget: traffic that never goes quiet, and a most at the least, teach nothing") {
  spin_budget b(50us, 1ms);
  auto t = spin_budget::clock::time_point{} + 1s;
  for (int i = 0; i < 10; ++i)
    b.moved(t += 300us);  // busy throughout: no quiet gap
  CHECK(b.spin() == 50us);
  spin_budget fixed(50us, 10us);
  for (int i = 0; i < 8; ++i)
    t = gap(fixed, t, 300us);
  CHECK(fixed.spin() == 50us);
}
