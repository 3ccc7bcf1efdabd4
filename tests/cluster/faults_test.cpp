// What --netem and --partition accept: a bad value must stop the launcher
// before any namespace exists, naming the option and the value.
#include <faults.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace pubsub::launch;

namespace {

std::string error_of(void (*f)()) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("faults: a partition is NODE@SECONDS+DURATION") {
  auto p = parse_partition("broker@2.5+7");
  CHECK(p.node == "broker");
  CHECK(p.at == doctest::Approx(2.5));
  CHECK(p.duration == doctest::Approx(7));
  CHECK(p.text == "broker@2.5+7");

  CHECK(error_of([] { parse_partition("broker+7"); }).find("NODE@SECONDS+DURATION") !=
        std::string::npos);
  CHECK(error_of([] { parse_partition("@2+7"); }).find("found '@2+7'") != std::string::npos);
  CHECK(error_of([] { parse_partition("broker@x+7"); }) ==
        "--partition broker@x+7: 'x' is not a number of seconds >= 0");
  CHECK(error_of([] { parse_partition("broker@2+-1"); }) ==
        "--partition broker@2+-1: '-1' is not a number of seconds >= 0");
  CHECK(error_of([] { parse_partition("broker@2+0"); }) ==
        "--partition broker@2+0: the duration must be more than 0 s");
  CHECK(error_of([] { parse_partition("broker@2s+1"); }) ==
        "--partition broker@2s+1: '2s' is not a number of seconds >= 0");
}

TEST_CASE("faults: a netem spec reaches the shell only in netem's own characters") {
  CHECK(checked_netem_spec("delay 5ms 2ms loss 1%") == "delay 5ms 2ms loss 1%");
  CHECK(checked_netem_spec("rate 1.5mbit") == "rate 1.5mbit");
  CHECK(error_of([] { checked_netem_spec("delay 5ms; reboot"); }) ==
        "--netem: 'delay 5ms; reboot' has ';', which is no part of a tc netem spec");
  CHECK(error_of([] { checked_netem_spec("$(id)"); }).find("has '$'") != std::string::npos);
  CHECK(error_of([] { checked_netem_spec("  "); }).find("wants a tc netem spec") !=
        std::string::npos);
}

TEST_CASE("faults: seconds are finite and not negative") {
  CHECK(parse_seconds("--timeout", "0") == 0);
  CHECK(parse_seconds("--timeout", "1e2") == doctest::Approx(100));
  CHECK(error_of([] { parse_seconds("--timeout", "inf"); }) ==
        "--timeout: 'inf' is not a number of seconds >= 0");
  CHECK(error_of([] { parse_seconds("--timeout", ""); }) ==
        "--timeout: '' is not a number of seconds >= 0");
  CHECK(error_of([] { parse_seconds("--timeout", "nan"); }).find("'nan'") != std::string::npos);
}
