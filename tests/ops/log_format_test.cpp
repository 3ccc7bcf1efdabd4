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
template <class Line>
std::string logged(config::log_level level, const std::string& node, const Line& line) {
  std::fflush(stderr);
  FILE* into = std::tmpfile();
  REQUIRE(into);
  int saved = ::dup(2);
  ::dup2(fileno(into), 2);
  logging::write(level, node, line);
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
      std::regex{
          R"(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","level":"warn",)"
          R"("node":"broker","event":"log","message":"peer \\"x\\\\\\\\y\\"\\\\x0anext\\\\x01"\}\n)"}));
  CHECK(
      logged(config::log_level::debug, "broker", std::string{"quiet"}).empty());  // below the level
}

TEST_CASE("logs: json records carry the event, the peer and its figures as fields of their own") {
  logging::set_level(config::log_level::info);
  auto hostile = std::string{"sub\"1\n"};
  logging::record r{"peer_lost",
                    hostile,
                    {{"reason", std::string{"timed out"}}, {"waited_ms", std::uint64_t{1500}}},
                    "lost node '" + hostile + "': timed out"};
  // The text format reads as before: the sentence alone.
  CHECK(logged(config::log_level::warn, "broker", r) ==
        "riomesh[broker] warn: lost node 'sub\"1\\x0a': timed out\n");
  logging::set_format(config::log_format::json);
  auto line = logged(config::log_level::warn, "broker", r);
  auto no_peer =
      logged(config::log_level::info, "broker", logging::record{"stopped", "", {}, "stopped"});
  logging::set_format(config::log_format::text);
  CHECK(std::regex_match(
      line,
      std::regex{R"(\{"time":"[^"]+","level":"warn","node":"broker","event":"peer_lost",)"
                 R"("peer":"sub\\"1\\\\x0a","fields":\{"reason":"timed out","waited_ms":1500\},)"
                 R"("message":"lost node 'sub\\"1\\\\x0a': timed out"\}\n)"}));
  // No peer, no fields: the keys are left out, not empty.
  CHECK(std::regex_match(no_peer, std::regex{R"(\{"time":"[^"]+","level":"info","node":"broker",)"
                                             R"("event":"stopped","message":"stopped"\}\n)"}));
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
