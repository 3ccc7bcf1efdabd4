// Addresses a deployment uses: IPv4, IPv6, host names; and the failures a
// user sees when an address is wrong.
#include <riomesh/channels/tcp/tcp_channel.hpp>

#include <drive.hpp>

#include <doctest/doctest.h>

#include <poll.h>
#include <unistd.h>

using namespace riomesh;
using namespace riomesh::channels;
using namespace riomesh::channels::tcp;

namespace {

void exchange_over(const std::string& listen_host, const std::string& connect_host) {
  auto l = listen_on({listen_host, 0});
  REQUIRE_MESSAGE(l.fd >= 0, l.error);
  auto port = static_cast<std::uint16_t>(local_port(l.fd));
  std::string error;
  auto client = tcp_channel::connect({connect_host, port}, {}, {}, error);
  REQUIRE_MESSAGE(client, error);
  pollfd p{l.fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  auto s = accept_from(l.fd, {});
  REQUIRE(s.fd >= 0);
  tcp_channel server(s.fd, s.peer, {});
  CHECK(test::send_all(*client, "hello", 5));
  char out[5];
  CHECK(test::recv_all(server, out, 5));
  CHECK(std::string(out, 5) == "hello");
  ::close(l.fd);
}

}  // namespace

TEST_CASE("tcp channels over IPv4, IPv6 and a host name") {
  exchange_over("127.0.0.1", "127.0.0.1");
  exchange_over("::1", "::1");
  exchange_over("127.0.0.1", "localhost");
}

TEST_CASE("a corked tcp channel sends a burst of small messages in one write") {
  auto l = listen_on({"127.0.0.1", 0});
  REQUIRE_MESSAGE(l.fd >= 0, l.error);
  std::string error;
  auto client = tcp_channel::connect({"127.0.0.1", static_cast<std::uint16_t>(local_port(l.fd))},
                                     {}, {}, error);
  REQUIRE_MESSAGE(client, error);
  pollfd p{l.fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  auto s = accept_from(l.fd, {});
  REQUIRE(s.fd >= 0);
  tcp_channel server(s.fd, s.peer, {});
  auto before = client->writes();
  std::string sent;
  client->cork(true);
  for (int i = 0; i < 1000; ++i) {
    auto msg = "message " + std::to_string(i) + ";";
    REQUIRE(client->send(msg.data(), msg.size()).st == status::ok);
    sent += msg;
  }
  CHECK(client->writes() == before);  // nothing left while corked
  client->cork(false);
  CHECK(client->writes() == before + 1);
  std::string got(sent.size(), '\0');
  REQUIRE(test::recv_all(server, got.data(), got.size()));
  CHECK(got == sent);
  ::close(l.fd);
}

TEST_CASE("connecting to nothing, or to a name that does not resolve, says so") {
  auto l = listen_on({"127.0.0.1", 0});
  auto port = static_cast<std::uint16_t>(local_port(l.fd));
  ::close(l.fd);  // nobody listens there now
  std::string error;
  CHECK_FALSE(tcp_channel::connect({"127.0.0.1", port}, {}, {}, error));
  CHECK(error == "connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused");
  CHECK_FALSE(tcp_channel::connect({"no-such-host.invalid", 7471}, {}, {}, error));
  CHECK(error.find("cannot resolve no-such-host.invalid:7471: ") == 0);
}
