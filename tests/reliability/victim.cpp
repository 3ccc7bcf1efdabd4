#include "victim.hpp"

#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <riomesh/config/key_text.hpp>

#include <cstdio>
#include <fstream>

namespace riomesh::test {
namespace {

using namespace std::chrono_literals;

std::string log_of(const std::string& what) {
  return "/tmp/riomesh-victim-" + what + "-" + std::to_string(::getpid()) + ".log";
}

}  // namespace

config::endpoint node_at(std::uint16_t port) {
  return {node_settings("x").node.listen.host, port};
}

victim_scene::victim_scene(const std::string& what, const std::vector<std::string>& args)
    : log_path(log_of(what)), victim(args, log_path) {
  REQUIRE(victim.started());
  honest = start_node(node_settings("node-a", {{"node-b", victim.port()}}));
  auto s = honest->remote_actor("node-b", "sink", 10s);
  REQUIRE_MESSAGE(s, error_text(*honest, s));
  sink = *s;
  still_serves();
}

victim_scene::~victim_scene() {
  std::remove(log_path.c_str());
}

void victim_scene::still_serves() {
  auto data = honest->allocate(1 << 20);
  fill(data, ++round);
  CHECK(sum_at(*honest, sink, data) == checksum(data));
}

void victim_scene::expect_cut_off(liar& l, const std::string& name, const std::string& reason) {
  CHECK_MESSAGE(victim.wait_log("lost node '" + name + "'", 15s), victim.log());
  auto log = victim.log();
  auto at = log.find("lost node '" + name + "'");
  if (at != std::string::npos && !reason.empty()) {
    auto line = log.substr(at, log.find('\n', at) - at);
    CHECK_MESSAGE(line.find(reason) != std::string::npos, line);
  }
  CHECK(l.wait_closed(15s));
  still_serves();
}

key_file::key_file(const std::string& name)
    : key(actors::node_key::generate()),
      path("/tmp/riomesh-key-" + name + "-" + std::to_string(::getpid()) + ".key") {
  std::ofstream(path) << config::private_key_pem(key.seed());
}

key_file::~key_file() {
  std::remove(path.c_str());
}

std::string key_file::public_text() const {
  return config::public_key_text(std::string(key.public_part().begin(), key.public_part().end()));
}

std::string setup_failure(const std::string& name, const config::endpoint& to,
                          const config::settings& like, const actors::node_identity& id) {
  try {
    liar l(name, to, like, true, id);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace riomesh::test
