// The raw socket API's waits and polls as a program sees them, over tcp in
// one process: a blocking call returns when its connection ends, and poll
// reports end of stream, hang-up and error as poll(2) does for a socket.
// (The same against librdmacm's rsocket API: tests/interop, cases unmapped
// and eof.)
#include <riomesh/channels/listener.hpp>
#include <riomesh/channels/raw_socket.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

using namespace riomesh;
using namespace riomesh::channels;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

struct socket_pair {
  socket_pair() {
    channel_options opt;
    opt.fabric = config::fabric_kind::tcp;
    std::string error;
    auto l = listen({"127.0.0.1", 0}, opt, error);
    REQUIRE_MESSAGE(l, error);
    auto accepted = std::async(std::launch::async, [&] {
      std::string e;
      return raw_socket::accept(*l, 5s, opt, e);
    });
    a = raw_socket::connect({"127.0.0.1", l->port()}, opt, error);
    REQUIRE_MESSAGE(a, error);
    b = accepted.get();
    REQUIRE(b);
  }
  std::unique_ptr<raw_socket> a, b;
};

}  // namespace

TEST_CASE("raw socket: a blocking riowrite returns when its connection ends, with the reason") {
  socket_pair s;
  // b maps 64 MiB and stops reading: a's write fills the socket and waits.
  std::vector<unsigned char> region(64 << 20);
  REQUIRE(s.b->riomap(region.data(), region.size(), 0x1000).st == status::ok);
  char hello = 'h';
  REQUIRE(s.b->send(&hello, 1).bytes == 1);  // a learns of the map with it
  REQUIRE(s.a->recv(&hello, 1).bytes == 1);
  s.a->set_timeout(30s);  // the bound of the old behaviour, not of the new
  std::vector<unsigned char> data(region.size(), 7);
  auto closer = std::thread([&] {
    std::this_thread::sleep_for(300ms);
    s.b.reset();  // gone, with the bytes it never read
  });
  auto start = clock_type::now();
  auto r = s.a->riowrite(data.data(), data.size(), 0x1000);
  auto took = clock_type::now() - start;
  closer.join();
  CHECK(r.st == status::closed);
  CHECK(took < 5s);
  CHECK_FALSE(s.a->reason().empty());
  MESSAGE("riowrite returned after ", std::chrono::duration<double>(took).count(),
          " s: ", s.a->reason());
}

TEST_CASE("raw socket: poll reports end of stream as readable, then hang-up") {
  socket_pair s;
  std::vector<unsigned char> bytes(1000, 3);
  REQUIRE(s.a->send(bytes.data(), bytes.size()).bytes == bytes.size());
  REQUIRE(s.a->shutdown(shutdown_how::write) == status::ok);
  std::vector<unsigned char> in(1000);
  std::size_t got = 0;
  while (got < in.size()) {
    auto r = s.b->recv(in.data() + got, in.size() - got);
    REQUIRE(r.bytes > 0);
    got += r.bytes;
  }
  // All read, the peer has shut down writing: a read returns at once.
  auto p = s.b->poll(poll_in, 2000ms);
  CHECK((p & poll_in) != 0);
  CHECK((p & (poll_hup | poll_err)) == 0);  // the other direction is still open
  CHECK(s.b->recv(in.data(), 1).st == status::eof);
  // b shuts down too: the connection has ended in order.
  REQUIRE(s.b->shutdown(shutdown_how::write) == status::ok);
  auto deadline = clock_type::now() + 5s;
  while (!(s.a->poll(poll_in, 100ms) & poll_hup) && clock_type::now() < deadline) {
  }
  p = s.a->poll(poll_in, 0ms);
  CHECK((p & poll_hup) != 0);
  CHECK((p & poll_in) != 0);
  CHECK((p & poll_err) == 0);
}

TEST_CASE("raw socket: poll reports a failed connection as an error, and readable") {
  socket_pair s;
  s.b.reset();  // vanishes without shutting down: a failure for a
  auto deadline = clock_type::now() + 5s;
  unsigned p = 0;
  while (!((p = s.a->poll(poll_in, 100ms)) & poll_err) && clock_type::now() < deadline) {
  }
  CHECK((p & poll_err) != 0);
  CHECK((p & poll_in) != 0);
  char c;
  CHECK(s.a->recv(&c, 1).st == status::closed);
}
