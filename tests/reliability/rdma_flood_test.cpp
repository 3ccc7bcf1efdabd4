// The tcp flood's counterpart on rdma (in the VM): clients that never
// become nodes hammer a node's rdma_cm listener while an honest peer
// streams to it. Connection requests left half open (no RTU), librdmacm
// rsockets (blocking and not) that connect and leave, channels that
// connect and never start a session or send garbage, handshakes with a
// wrong secret. The node must keep accepting real nodes meanwhile, close
// each intruder, keep the honest stream intact and flowing, and give back
// every descriptor, queue pair, connection id and memory registration.
#include "liar.hpp"
#include "rdma_clients.hpp"
#include "refusals.hpp"
#include "resources.hpp"

#include <cluster.hpp>
#include <process.hpp>

#include <caf/scoped_actor.hpp>

#include <doctest/doctest.h>

#include <rdma/rsocket.h>

#include <netinet/in.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

long ms_since(clock_type::time_point t) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t).count());
}

// What the device and this process hold, to compare before and after.
struct held {
  std::size_t fds = 0;
  long mrs = 0, qps = 0, cm_ids = 0, pds = 0;
  static held now() {
    return {open_descriptors(), memory_registrations(), rdma_resources("qp"),
            rdma_resources("cm_id"), rdma_resources("pd")};
  }
  bool operator==(const held& o) const {
    return fds == o.fds && mrs == o.mrs && qps == o.qps && cm_ids == o.cm_ids && pds == o.pds;
  }
  std::string text() const {
    return "fds " + std::to_string(fds) + ", mrs " + std::to_string(mrs) + ", qps " +
           std::to_string(qps) + ", cm_ids " + std::to_string(cm_ids) + ", pds " +
           std::to_string(pds);
  }
};

// Where a connect-and-close rsocket client got to, for one that does not
// return in time: the step it hangs in, and when it came back.
struct rsocket_round {
  bool blocking = true;
  std::atomic<long> thread{0};     // the kernel's id of the thread running it
  std::atomic<int> fd{-2};         // -2: still dialing
  std::atomic<int> port{0};        // its own, to find it in the node's log
  std::atomic<long> returned{-1};  // ms after its start, once closed
  clock_type::time_point start = clock_type::now();

  // Whether it waits inside rxe's deregistration of a memory region. The
  // kernel (Debian's 6.1, rdma_rxe) now and then still holds a reference to
  // a region of a connection that just ended; deregistering it then waits
  // out the kernel's own timeout, warns (rxe_pool.c, __rxe_cleanup) and
  // frees it anyway: about a minute in the VM, seen in about 1 run of 10.
  // That is a wait on the kernel, not on the node; a client that waits on
  // the node shows elsewhere (rshutdown's wait for its completions, or
  // rdma_cm).
  bool in_kernel_mr_cleanup() const {
    auto frames = kernel_stack();
    // __rxe_cleanup is the wait itself, whichever object it frees (the
    // region, or the queue pair that still references it).
    return frames.find("rxe_dereg_mr") != std::string::npos ||
           frames.find("__rxe_cleanup") != std::string::npos;
  }
  // Its thread's kernel stack, one frame after another: where it waits.
  std::string kernel_stack() const {
    std::ifstream stack("/proc/self/task/" + std::to_string(thread.load()) + "/stack");
    std::string line, out;
    while (std::getline(stack, line))
      out += (out.empty() ? "" : " < ") + line.substr(line.find(']') + 2);
    return out.empty() ? "(no kernel stack)" : out;
  }

  std::string text() const {
    auto f = fd.load();
    std::string where = f == -2 ? "stuck dialing"
                                : "dialed (descriptor " + std::to_string(f) + ", port " +
                                      std::to_string(port.load()) + "), stuck closing";
    auto r = returned.load();
    return std::string(blocking ? "blocking" : "cut off mid-connect") + ": " + where +
           (r < 0 ? ", not back yet" : ", back after " + std::to_string(r) + " ms");
  }
};

}  // namespace

TEST_CASE("flood on rdma: half-open requests, silent clients, garbage, wrong secrets") {
  if (fabric_under_test() != "rdma")
    return;
  auto settings = node_settings("node-a");
  const auto host = settings.node.listen.host;
  auto a = start_node(settings);
  auto sink = spawn_sink(a->system());
  a->publish(sink, "sink");
  caf::scoped_actor self{a->system()};
  const config::endpoint at{host, a->port()};
  auto wrong = node_settings("intruder", {}, "not-the-cluster-secret");
  // One of each intruder before counting: librdmacm and its rsockets keep
  // a few things (descriptors, a registration; rpoll's wake-up eventfd)
  // once first used. What the flood then leaks per connection shows as a
  // difference after it.
  rsocket_close(rsocket_dial(host, a->port()));
  rsocket_close(rsocket_dial_nonblocking(host, a->port(), 5s));
  // rpoll makes its eventfd only when it first has to block, which the
  // dial above may not have needed: make it now.
  ::rpoll(nullptr, 0, 1);
  { half_open_client once(host, a->port()); }
  { liar once("warm-up", at, settings, false); }
  try {
    liar once("warm-up", at, wrong);
  } catch (const std::exception&) {
  }
  std::this_thread::sleep_for(2500ms);  // the node lets them go
  auto before = held::now();
  auto registered_before = a->stats().memory.registered;
  MESSAGE("before: ", before.text(), "; ", descriptor_list());
  REQUIRE(before.mrs >= 0);  // the counts are known here
  auto log = "/tmp/riomesh-rdma-flood-" + std::to_string(::getpid()) + ".log";
  auto honest = std::make_unique<peer_process>(
      std::vector<std::string>{"node-b", "stream", "0", "node-a", std::to_string(a->port())}, log);
  REQUIRE(honest->started());
  std::this_thread::sleep_for(300ms);
  bool intact = false;
  auto blobs_before = sink_count(self, sink, intact);

  // 1. Connection requests that never complete. Accepting must not wait
  // for their last step: a new node gets in as fast as with none of them.
  auto reach = [&](const std::string& name) {
    auto c = std::make_unique<peer_process>(
        std::vector<std::string>{name, "serve", "0", "node-a", std::to_string(a->port())});
    REQUIRE(c->started());
    auto t0 = clock_type::now();
    auto calc = a->remote_actor<calc_actor>(name, "calc", 100ms);
    while (!calc && ms_since(t0) < 30000)
      calc = a->remote_actor<calc_actor>(name, "calc", 100ms);
    REQUIRE_MESSAGE(calc, error_text(*a, calc));
    auto took = ms_since(t0);
    CHECK(c->stop() == 0);
    return took;
  };
  auto unhindered = reach("node-c");
  std::vector<std::unique_ptr<half_open_client>> half_open;
  for (int i = 0; i < 20; ++i)
    half_open.push_back(std::make_unique<half_open_client>(host, a->port()));
  auto hindered = reach("node-d");
  MESSAGE("a new node got in after ", unhindered, " ms, and after ", hindered,
          " ms with 20 requests half open");
  CHECK(hindered < unhindered + 3000);  // waiting on each took 5 s apiece
  std::this_thread::sleep_for(3s);      // past the setup limit (2 s here)
  for (std::size_t i = 0; i < half_open.size(); i += 7) {
    std::string seen;
    for (const auto& e : half_open[i]->events())
      seen += " " + e;
    MESSAGE("half-open client ", i, " saw:", seen);
  }
  half_open.clear();

  // 2. rsocket clients that connect and never speak, one blocking and one
  // non-blocking (rpoll between reads): the node gives up at the setup
  // limit and says so in band, so each client's read ends and its close
  // returns (a v44 rsocket ignores the connection manager's disconnect, and
  // its close would wait forever on a write to a queue pair that is gone).
  auto silent_rsocket = [&](const std::string& kind, int fd) {
    REQUIRE_MESSAGE(fd >= 0, "the ", kind, " rsocket client could not connect");
    auto read = std::make_shared<long>(-1);
    bool done = returns_within(10s, [fd, read] {
      *read = rsocket_read_to_end(fd);
      rsocket_close(fd);
    });
    CHECK_MESSAGE(done, "the ", kind, " rsocket client still waits 10 s after connecting");
    if (done) {
      // Nothing: an acceptor speaks once the dialer's TLS ClientHello is in.
      MESSAGE("the ", kind, " rsocket client read ", *read, " bytes, then the end");
      CHECK(*read == 0);
    }
  };
  silent_rsocket("blocking", rsocket_dial(host, a->port()));
  silent_rsocket("non-blocking", rsocket_dial_nonblocking(host, a->port(), 5s));

  // An rsocket client that sends garbage instead of a TLS ClientHello: the
  // node refuses it at once and ends the stream in band too, long before
  // the setup limit. (Closing at once, its read never ended.)
  {
    int fd = rsocket_dial(host, a->port());
    REQUIRE(fd >= 0);
    auto t0 = clock_type::now();
    auto read = std::make_shared<long>(-1);
    bool done = returns_within(10s, [fd, read] {
      if (rsocket_send_all(fd, std::vector<unsigned char>(64, 0xa5)))
        *read = rsocket_read_to_end(fd);
      rsocket_close(fd);
    });
    CHECK_MESSAGE(done, "the garbage-sending rsocket client still waits 10 s later");
    if (done) {
      MESSAGE("the garbage-sending rsocket client read ", *read, " bytes, then the end, after ",
              ms_since(t0), " ms");
      CHECK(*read == 0);
      CHECK(ms_since(t0) < 1500);  // the setup limit here is 2 s
    }
  }

  // 3. Clients that connect and never start a session: each closed within
  // the setup limit (or at once while too many are setting up).
  std::vector<std::unique_ptr<liar>> silent;
  std::mutex silent_lock;
  auto dial_start = clock_type::now();
  std::vector<std::thread> dialers;
  for (int t = 0; t < 4; ++t)
    dialers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        try {
          auto l =
              std::make_unique<liar>("silent", config::endpoint{host, a->port()}, settings, false);
          std::lock_guard<std::mutex> g(silent_lock);
          silent.push_back(std::move(l));
        } catch (const std::exception&) {
          // refused at once: too many setting up
        }
      }
    });
  for (auto& t : dialers)
    t.join();
  MESSAGE(silent.size(), " silent clients connected in ", ms_since(dial_start), " ms");
  CHECK(silent.size() > 50);

  // 4. Meanwhile, for 3 s: connect-and-leave, garbage, and handshakes with
  // a wrong secret, from two threads.
  // Refused for its secret, or at once by the connection manager over the
  // setup cap, or closed first to make room for newer connections.
  refusals refused(std::vector<std::pair<std::string, std::string>>{
      {"wrong cluster secret", "for the wrong secret"},
      {"the peer ended the connection during setup", "closed for newer connections"},
      {"REJECTED", "rejected over the setup cap"}});
  std::atomic<int> wrong_secret_tries{0}, rounds{0}, garbage_closed{0}, garbage_sent{0},
      rsockets_blocking{0}, rsockets_cut_off{0};
  std::vector<std::shared_ptr<rsocket_round>> stuck_rsockets;
  std::mutex stuck_lock;
  auto port = a->port();
  auto hammer = [&](unsigned seed) {
    std::mt19937 rng(seed);
    for (auto end = clock_type::now() + 3s; clock_type::now() < end; ++rounds) {
      switch (rng() % 3) {
        case 0:
          // Either connected, or closed mid-connect as a non-blocking
          // client may: the node must let go of both.
          {
            auto round = std::make_shared<rsocket_round>();
            round->blocking = rng() % 2;
            ++(round->blocking ? rsockets_blocking : rsockets_cut_off);
            if (!returns_within(5s, [host, port, round] {
                  round->thread = ::syscall(SYS_gettid);
                  int fd =
                      round->blocking ? rsocket_dial(host, port) : rsocket_start_dial(host, port);
                  sockaddr_in self{};
                  socklen_t len = sizeof self;
                  if (fd >= 0 && ::rgetsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) == 0)
                    round->port = ntohs(self.sin_port);
                  round->fd = fd;
                  rsocket_close(fd);
                  round->returned = ms_since(round->start);
                })) {
              std::lock_guard<std::mutex> g(stuck_lock);
              stuck_rsockets.push_back(round);
            }
          }
          break;
        case 1: {
          std::unique_ptr<liar> junk;
          try {
            junk = std::make_unique<liar>("junk", at, settings, false);
          } catch (const std::exception&) {
            break;  // refused at once: too many setting up
          }
          std::vector<unsigned char> bytes(1 + rng() % 512);
          for (auto& b : bytes)
            b = static_cast<unsigned char>(rng());
          ++garbage_sent;
          try {
            junk->say(bytes);
            junk->wait_closed(3s);
          } catch (const std::exception&) {
            // closed before it all went out, or stuck: the count says which
          }
          garbage_closed += junk->channel().closed();
          break;
        }
        default:
          ++wrong_secret_tries;
          try {
            liar l("intruder", at, wrong);
            refused.add("");  // accepted: a failure
          } catch (const std::exception& e) {
            refused.add(e.what());
          }
      }
    }
  };
  std::thread h1(hammer, 1), h2(hammer, 2);
  h1.join();
  h2.join();
  MESSAGE(rounds.load(), " hammer rounds; ", wrong_secret_tries.load(),
          " handshakes with a wrong secret: ", refused.summary(),
          "; garbage closed by the node: ", garbage_closed.load(), " of ", garbage_sent.load(),
          "; blocking rsockets (connected or refused) then closed: ", rsockets_blocking.load(),
          ", closed mid-connect: ", rsockets_cut_off.load());
  CHECK(wrong_secret_tries.load() > 0);
  CHECK(refused.count() == wrong_secret_tries.load());
  CHECK_MESSAGE(refused.unexpected().empty(), refused.unexpected());
  // Those held up in the kernel (see rsocket_round) come back once it has
  // waited out its leak (about a minute under emulation); the count of
  // what everything holds below needs them back first.
  std::vector<std::shared_ptr<rsocket_round>> held_by_kernel, stuck_on_us;
  for (auto& r : stuck_rsockets)
    (r->in_kernel_mr_cleanup() ? held_by_kernel : stuck_on_us).push_back(r);
  auto back = [](const std::shared_ptr<rsocket_round>& r) { return r->returned.load() >= 0; };
  for (auto until = clock_type::now() + 120s;
       !std::all_of(held_by_kernel.begin(), held_by_kernel.end(), back) &&
       clock_type::now() < until;)
    std::this_thread::sleep_for(100ms);
  for (auto& r : held_by_kernel) {
    MESSAGE(
        "an rsocket client waited in the kernel's rxe memory region cleanup (not on the "
        "node), ",
        r->text());
    CHECK_MESSAGE(back(r), "it did not come back within 2 minutes");
  }
  for (auto& r : stuck_on_us)
    MESSAGE("a stuck rsocket client, ", r->text(), "; in the kernel: ", r->kernel_stack());
  CHECK_MESSAGE(stuck_on_us.empty(), stuck_on_us.size(), " of ",
                rsockets_blocking.load() + rsockets_cut_off.load(),
                " rsocket clients did not get through connecting and closing within 5 s");
  CHECK(garbage_closed.load() == garbage_sent.load());

  std::size_t closed = 0;
  for (auto& l : silent)
    closed += l->wait_closed(5s);
  MESSAGE(closed, " of ", silent.size(), " silent clients closed by the node");
  CHECK(closed == silent.size());
  silent.clear();

  // The honest peer kept streaming, intact, and still answers.
  auto blobs_after = sink_count(self, sink, intact);
  MESSAGE("honest blobs during the flood: ", blobs_after - blobs_before);
  CHECK(intact);
  CHECK(blobs_after > blobs_before);
  auto b_calc = a->remote_actor<calc_actor>("node-b", "calc");
  REQUIRE_MESSAGE(b_calc, error_text(*a, b_calc));
  MESSAGE("stopping the honest peer");
  auto status = honest->stop();
  CHECK_MESSAGE(status == 0, honest->log());
  honest.reset();  // its pipes too
  std::remove(log.c_str());
  // Everything the flood took is given back, on the device too.
  auto after = held::now();
  for (auto deadline = clock_type::now() + 15s; !(after == before) && clock_type::now() < deadline;
       after = held::now())
    std::this_thread::sleep_for(100ms);
  MESSAGE("after: ", after.text(), "; ", descriptor_list());
  CHECK(after == before);
  // The node's own count agrees: every intruder's rings went with it.
  CHECK(a->stats().memory.registered == registered_before);
}
