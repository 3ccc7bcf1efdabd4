#include <riomesh/config/units.hpp>

#include <doctest/doctest.h>

using namespace riomesh::config;
using namespace std::chrono_literals;

TEST_CASE("sizes take binary and decimal units") {
  CHECK(parse_size("64KiB") == 65536u);
  CHECK(parse_size("8 MiB") == 8u * 1024 * 1024);
  CHECK(parse_size("1GiB") == 1u << 30);
  CHECK(parse_size("2TiB") == 2ull << 40);
  CHECK(parse_size("1kB") == 1000u);
  CHECK(parse_size("3MB") == 3000000u);
  CHECK(parse_size("4096") == 4096u);
  CHECK(parse_size("7B") == 7u);
  CHECK(parse_size("0") == 0u);
}

TEST_CASE("sizes reject signs, fractions, unknown units and overflow") {
  CHECK_FALSE(parse_size("-1"));
  CHECK_FALSE(parse_size("1.5MiB"));
  CHECK_FALSE(parse_size("10XB"));
  CHECK_FALSE(parse_size("kib"));
  CHECK_FALSE(parse_size(""));
  CHECK_FALSE(parse_size("18446744073709551616"));  // 2^64
  CHECK(parse_size("18446744073709551615") == 18446744073709551615ull);
  CHECK_FALSE(parse_size("17179869184GiB"));  // 2^34 GiB = 2^64
}

TEST_CASE("durations need a unit unless zero") {
  CHECK(parse_duration("10us") == duration{10us});
  CHECK(parse_duration("250ms") == duration{250ms});
  CHECK(parse_duration("2s") == duration{2s});
  CHECK(parse_duration("1min") == duration{60s});
  CHECK(parse_duration("5ns") == duration{5ns});
  CHECK(parse_duration("0") == duration{0ns});
  CHECK_FALSE(parse_duration("10"));
  CHECK_FALSE(parse_duration("10 hours"));
  CHECK_FALSE(parse_duration("1.5s"));
  CHECK_FALSE(parse_duration("10000000000s"));  // past 2^63 ns
}

TEST_CASE("sizes and durations print in their shortest exact unit") {
  CHECK(format_size(131072) == "128KiB");
  CHECK(format_size(64ull << 20) == "64MiB");
  CHECK(format_size(3ull << 30) == "3GiB");
  CHECK(format_size(1000) == "1000B");
  CHECK(format_size(0) == "0B");
  CHECK(format_duration(10us) == "10us");
  CHECK(format_duration(1500ms) == "1500ms");
  CHECK(format_duration(2s) == "2s");
  CHECK(format_duration(0ns) == "0");
  for (auto text : {"4KiB", "7B", "129KiB", "5GiB"})
    CHECK(format_size(*parse_size(text)) == text);
}
