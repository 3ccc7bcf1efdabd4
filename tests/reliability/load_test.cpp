// Load: 64 nodes in 4 processes (load_sender) each send 10k blobs of mixed
// sizes to one node here, whose per-connection arena is small, so that
// credits run out and queues fill on purpose. Every blob must arrive once,
// in order per sender, intact, except those a sender was told were
// undelivered (never a silent loss); nothing may deadlock (the whole run is
// bounded in time); this node's memory stays within its arenas plus a
// fixed margin. RIOMESH_LOAD_MESSAGES changes the count per sender.
#include <cluster.hpp>
#include <process.hpp>

#include <caf/event_based_actor.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

using namespace riomesh;
using namespace riomesh::test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t processes = 4, per_process = 16, senders = processes * per_process;
constexpr std::uint64_t arena = 8 << 20;

struct tally {
  std::uint64_t next = 0, received = 0, gaps = 0, bytes = 0;
  bool in_order = true, intact = true;
};
struct tallies {
  std::mutex lock;
  std::map<std::uint64_t, tally> by_sender;
  std::uint64_t total = 0;
};

caf::behavior load_sink(caf::event_based_actor*, std::shared_ptr<tallies> t) {
  return {
      [t](const blob& b) {
        bool ok = matches(b.data, b.seq);
        std::lock_guard<std::mutex> g(t->lock);
        auto& s = t->by_sender[b.seq >> 40];
        auto n = b.seq & ((1ull << 40) - 1);
        if (n < s.next)
          s.in_order = false;  // a repeat or a reordering
        else
          s.gaps += n - s.next;
        s.next = n + 1;
        s.intact &= ok;
        ++s.received;
        s.bytes += b.data.size();
        ++t->total;
      },
      [](sum_atom, const buffer& b) { return checksum(b); },
  };
}

std::uint64_t rss_of_self() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib << 10;
    }
    std::getline(in, key);
  }
  return 0;
}

}  // namespace

TEST_CASE("load: 64 nodes x 10k mixed-size messages, arenas exhausted, exactly once, in order") {
  std::uint64_t messages = 10000;
  if (const char* m = std::getenv("RIOMESH_LOAD_MESSAGES"))
    messages = std::stoull(m);
  auto settings = node_settings("node-a");
  settings.channel.arena = arena;
  settings.channel.peer_timeout = 5s;  // a loaded 2-core machine is not a dead peer
  settings.channel.keepalive = 500ms;
  auto a = start_node(settings);
  auto t = std::make_shared<tallies>();
  a->publish(a->system().spawn(load_sink, t), "sink");
  auto seed = static_cast<std::uint64_t>(::getpid());
  MESSAGE(senders, " senders x ", messages, " messages, arena ", arena >> 20, " MiB, seed ", seed);
  std::vector<std::unique_ptr<peer_process>> procs;
  for (std::uint64_t p = 0; p < processes; ++p) {
    procs.push_back(std::make_unique<peer_process>(
        RIOMESH_BINARY_DIR "/tests/reliability/load_sender",
        std::vector<std::string>{std::to_string(a->port()), std::to_string(p * per_process),
                                 std::to_string(per_process), std::to_string(messages),
                                 std::to_string(seed)},
        ""));
    REQUIRE(procs.back()->started());
  }
  auto start = clock_type::now();
  std::map<std::uint64_t, std::string> done;  // sender index -> its line
  std::uint64_t peak_rss = 0, peak_sender_rss = 0;
  auto last_report = start;
  while (done.size() < senders) {
    REQUIRE_MESSAGE(clock_type::now() - start < 25min, "no progress: ", done.size(), " done");
    for (auto& p : procs) {
      for (auto line = p->read_line(100ms); !line.empty(); line = p->read_line(0ms)) {
        std::istringstream is(line);
        std::string word;
        std::uint64_t index = 0;
        is >> word >> index;
        REQUIRE_MESSAGE(word == "done", line);
        done[index] = line;
      }
      peak_sender_rss = std::max(peak_sender_rss, p->rss());
    }
    peak_rss = std::max(peak_rss, rss_of_self());
    if (clock_type::now() - last_report > 15s) {
      last_report = clock_type::now();
      std::lock_guard<std::mutex> g(t->lock);
      MESSAGE(std::chrono::duration_cast<std::chrono::seconds>(last_report - start).count(),
              " s: ", t->total, " messages in, ", done.size(), " senders done, RSS ",
              rss_of_self() >> 20, " MiB");
    }
  }
  auto took = std::chrono::duration<double>(clock_type::now() - start).count();
  std::uint64_t total = 0, bytes = 0, undelivered_all = 0, stalls_all = 0;
  std::lock_guard<std::mutex> g(t->lock);
  for (std::uint64_t i = 0; i < senders; ++i) {
    CAPTURE(done[i]);
    std::istringstream is(done[i]);
    std::string w;
    std::uint64_t index = 0, sent = 0, undelivered = 0, stalls = 0;
    is >> w >> index >> w >> sent >> w >> undelivered >> w >> stalls;
    auto& s = t->by_sender[i];
    CHECK(sent == messages);
    CHECK(s.in_order);
    CHECK(s.intact);
    // Exactly once: what was not reported undelivered arrived, once.
    CHECK(s.received + undelivered == sent);
    CHECK(s.gaps + (messages - s.next) == undelivered);
    total += s.received;
    bytes += s.bytes;
    undelivered_all += undelivered;
    stalls_all += stalls;
  }
  MESSAGE(total, " messages (", bytes >> 20, " MiB) in ", took, " s; ", undelivered_all,
          " reported undelivered; ", stalls_all, " waits for arena credit; peak RSS here ",
          peak_rss >> 20, " MiB, of a sender process ", peak_sender_rss >> 20, " MiB");
  CHECK(stalls_all > 0);  // the arenas did run out
  // The senders keep within the queue: nothing may have been refused.
  CHECK(undelivered_all == 0);
  // Bounded: the arenas plus a fixed margin, not growing with the messages.
  CHECK(peak_rss < senders * arena + (512ull << 20));
  for (auto& p : procs)
    CHECK(p->stop() == 0);
}
