// The log line formats: text by default, one JSON object per line with
// logging.format: json, whatever a peer put into the text.
#include <riomesh/config/loader.hpp>
#include <riomesh/log.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>

using namespace riomesh;

namespace {

// What logging::write puts on stderr for one call.
std::string logged(config::log_level level, const std::string& node, const std::string& text) {
  std::fflush(stderr);
  FILE* into = std::tmpfile();
  REQUIRE(into);
  int saved = ::dup(2);
  ::dup2(fileno(into), 2);
  logging::write(level, node, text);
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(into);
  std::string out;
  char buf[512];
  while (auto n = std::fread(buf, 1, sizeof buf, into))
    out.append(buf, n);
  std::fclose(into);
  return out;
}

}  // namespace

TEST_CASE("logs: text by default, or json with one object per line, peer text escaped") {
  logging::set_level(config::log_level::info);
  auto hostile = std::string{"peer \"x\\y\"\nnext\x01"};
  CHECK(logged(config::log_level::warn, "broker", hostile) ==
        "riomesh[broker] warn: peer \"x\\\\y\"\\x0anext\\x01\n");
  logging::set_format(config::log_format::json);
  auto line = logged(config::log_level::warn, "broker", hostile);
  logging::set_format(config::log_format::text);
  CHECK(std::regex_match(
      line,
      std::regex{R"(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","level":"warn",)"
                 R"("node":"broker","message":"peer \\"x\\\\\\\\y\\"\\\\x0anext\\\\x01"\}\n)"}));
  CHECK(logged(config::log_level::debug, "broker", "quiet").empty());  // below the level
}

TEST_CASE("logging.format: text or json, and a clear error otherwise") {
  auto base = std::string{"node:\n  name: n1\n  listen: 127.0.0.1:7471\nlogging:\n"};
  CHECK(config::load_string(base + "  format: json\n", "node.yaml", ".").logging.format ==
        config::log_format::json);
  CHECK(config::load_string(base, "node.yaml", ".").logging.format == config::log_format::text);
  try {
    config::load_string(base + "  format: xml\n", "node.yaml", ".");
    FAIL("xml was taken");
  } catch (const config::error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].to_string().find("logging.format") != std::string::npos);
    CHECK(e.problems()[0].to_string().find("xml") != std::string::npos);
  }
}
