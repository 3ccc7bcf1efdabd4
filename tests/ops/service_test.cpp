// riomesh-node as systemd runs it: the notify protocol over a real
// datagram socket (READY=1 once its actors are up, WATCHDOG=1 while it
// answers, STOPPING=1 on SIGTERM), and the installed unit as systemd reads
// it (systemd-analyze verify).
#include <node_process.hpp>
#include <temp_folder.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

using pubsub::launch::node_process;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string bin = RIOMESH_BINARY_DIR;

// The socket systemd listens on for a Type=notify service.
struct notify_socket {
  int fd = -1;
  std::string path;
  explicit notify_socket(const fs::path& at) : path(at.string()) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof a.sun_path);
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~notify_socket() { ::close(fd); }
  // The next datagram within `limit`, or "".
  std::string next(std::chrono::milliseconds limit) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(limit.count())) != 1)
      return {};
    char buf[4096];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string{};
  }
};

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen((command + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p))
      out += buf;
    int status = ::pclose(p);
    out += "exit " + std::to_string(WEXITSTATUS(status));
  }
  return out;
}

}  // namespace

TEST_CASE("service: riomesh-node speaks systemd's notify protocol") {
  riomesh::test::temp_folder dir{"riomesh-service"};
  notify_socket sock(dir.path / "notify");
  std::ofstream(dir.path / "node.yaml") << "node:\n  name: svc\n  listen: 127.0.0.1:0\n"
                                           "  fabric: tcp\nlogging:\n  level: warn\n";
  // As systemd starts it with WatchdogSec=400ms: fed every 200 ms.
  node_process node("svc",
                    {"/usr/bin/env", "NOTIFY_SOCKET=" + sock.path, "WATCHDOG_USEC=400000",
                     bin + "/tools/riomesh-node", "--config", (dir.path / "node.yaml").string()});
  node.start();
  auto ready = sock.next(20s);
  CHECK(ready.rfind("READY=1\nSTATUS=node 'svc' listening on 127.0.0.1:", 0) == 0);
  CHECK(ready.find(", 0 actors") != std::string::npos);
  int fed = 0;
  auto until = std::chrono::steady_clock::now() + 2s;
  while (fed < 3 && std::chrono::steady_clock::now() < until)
    fed += sock.next(1s) == "WATCHDOG=1";
  CHECK(fed == 3);
  node.signal(SIGTERM);
  // Fed perhaps meanwhile, then told it stops.
  bool stopping = false;
  for (auto by = std::chrono::steady_clock::now() + 10s;
       !stopping && std::chrono::steady_clock::now() < by;)
    stopping = sock.next(1s).rfind("STOPPING=1", 0) == 0;
  CHECK(stopping);
  auto stopped_by = std::chrono::steady_clock::now() + 20s;
  while (!node.reap() && std::chrono::steady_clock::now() < stopped_by)
    std::this_thread::sleep_for(10ms);
  REQUIRE_FALSE(node.running());
  CHECK(node.how_ended() == "exit 0");
}

TEST_CASE("service: without NOTIFY_SOCKET the node says nothing and runs as before") {
  riomesh::test::temp_folder dir{"riomesh-service"};
  std::ofstream(dir.path / "node.yaml") << "node:\n  name: plain\n  listen: 127.0.0.1:0\n"
                                           "  fabric: tcp\n";
  node_process node("plain", {"/usr/bin/env", "-u", "NOTIFY_SOCKET", bin + "/tools/riomesh-node",
                              "--config", (dir.path / "node.yaml").string()});
  node.start();
  std::string seen;
  auto until = std::chrono::steady_clock::now() + 20s;
  while (seen.find("listening on") == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    for (const auto& l : node.read_lines())
      seen += l + "\n";
    std::this_thread::sleep_for(10ms);
  }
  CHECK(seen.find("listening on") != std::string::npos);
  node.signal(SIGTERM);
  while (!node.reap() && std::chrono::steady_clock::now() < until + 20s)
    std::this_thread::sleep_for(10ms);
  CHECK(node.how_ended() == "exit 0");
}

TEST_CASE("service: systemd-analyze verify takes the installed unit without a word") {
  riomesh::test::temp_folder dir{"riomesh-service"};
  std::ifstream in(RIOMESH_UNIT_FILE);
  REQUIRE(in);
  std::stringstream unit;
  unit << in.rdbuf();
  // As installed, but pointing at this build's riomesh-node (verify
  // checks that ExecStart's program exists).
  auto text = std::regex_replace(unit.str(), std::regex{"ExecStart=\\S+"},
                                 "ExecStart=" + bin + "/tools/riomesh-node");
  std::ofstream(dir.path / "riomesh-node@.service") << text;
  CHECK(text.find("Type=notify") != std::string::npos);
  CHECK(text.find("WatchdogSec=") != std::string::npos);
  CHECK(text.find("LimitMEMLOCK=infinity") != std::string::npos);
  CHECK(run("systemd-analyze verify " + (dir.path / "riomesh-node@broker.service").string()) ==
        "exit 0");
}
