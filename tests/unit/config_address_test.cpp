#include <riomesh/config/address.hpp>

#include <doctest/doctest.h>

using namespace riomesh::config;

namespace {

endpoint ok(const char* text) {
  auto parsed = parse_endpoint(text);
  REQUIRE_MESSAGE(std::holds_alternative<endpoint>(parsed), text);
  return std::get<endpoint>(parsed);
}

std::string bad(const char* text) {
  auto parsed = parse_endpoint(text);
  REQUIRE_MESSAGE(std::holds_alternative<std::string>(parsed), text);
  return std::get<std::string>(parsed);
}

}  // namespace

TEST_CASE("endpoints: IPv4, IPv6 in brackets, host names") {
  CHECK(ok("10.0.0.1:7471") == endpoint{"10.0.0.1", 7471});
  CHECK(ok("[::1]:1") == endpoint{"::1", 1});
  CHECK(ok("[fe80::1:2]:65535") == endpoint{"fe80::1:2", 65535});
  CHECK(ok("node-a.example:0") == endpoint{"node-a.example", 0});
  CHECK(ok("localhost:80") == endpoint{"localhost", 80});
}

TEST_CASE("malformed endpoints say what is wrong") {
  CHECK(bad("127.0.0.1") == "expected host:port (e.g. 127.0.0.1:7471)");
  CHECK(bad("127.0.0.1:70000") == "port 70000 is out of range (0 .. 65535)");
  CHECK(bad("127.0.0.1:") == "port '' is not a number from 0 to 65535");
  CHECK(bad("127.0.0.1:http") == "port 'http' is not a number from 0 to 65535");
  CHECK(bad("300.1.1.1:1") == "'300.1.1.1' is not an IPv4 address");
  CHECK(bad("::1:7471") == "an IPv6 address needs brackets: [addr]:port");
  CHECK(bad("[::1:7471") == "missing ']' after the IPv6 address");
  CHECK(bad("[::g]:1") == "'::g' is not an IPv6 address");
  CHECK(bad("[::1]7471") == "expected ':port' after ']'");
  CHECK(bad("bad_host:1") == "'bad_host' is not a valid host name");
  CHECK(bad("-a:1") == "'-a' is not a valid host name");
  CHECK(bad(":1") == "'' is not a valid host name");
}

TEST_CASE("loopback addresses") {
  CHECK(is_loopback({"127.0.0.1", 1}));
  CHECK(is_loopback({"127.3.2.1", 1}));
  CHECK(is_loopback({"::1", 1}));
  CHECK(is_loopback({"localhost", 1}));
  CHECK_FALSE(is_loopback({"0.0.0.0", 1}));
  CHECK_FALSE(is_loopback({"10.0.0.1", 1}));
  CHECK_FALSE(is_loopback({"::", 1}));
  CHECK_FALSE(is_loopback({"node-a", 1}));
  CHECK(to_string(endpoint{"::1", 7}) == "[::1]:7");
  CHECK(to_string(endpoint{"a.b", 7}) == "a.b:7");
}
