// What one node holds per connection: its resident and pinned memory with
// N peers connected and idle, then busy, then idle again. The node (the
// hub) runs in a child process of its own, so its figures are its own;
// the peers are N runtimes in this process, each one connection to the
// hub's sink actor, which answers every message. Busy: every peer keeps a
// window of requests carrying a buffer of SIZE in flight for SECONDS.
// Each count runs against a fresh hub, with arenas sized by demand (the
// default, channel.arena_min) and, with --fixed, with today's fixed
// arenas (channel.arena_min 0) beside them. Fabric: tcp on loopback, or
// rdma where RIOMESH_RDMA_ADDR names a device's address (the VM).
// --idle N measures one hub with N idle peers only, the peers in child
// processes of at most 200 runtimes each (CAF node ids of one process's
// runtimes repeat past 256).
//   arena_memory_bench [--connections 1,16,64,256] [--size 65536]
//       [--window 4] [--seconds 3] [--arena 64MiB-in-bytes] [--budget B] [--fixed]
//       [--idle N]
#include "size_name.hpp"

#include <riomesh/runtime.hpp>

#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using sink_atom = caf::atom_constant<caf::atom("am_sink")>;
using clock_type = std::chrono::steady_clock;

struct options {
  std::vector<std::size_t> connections{1, 16, 64, 256};
  std::size_t size = 64 << 10, window = 4;
  double seconds = 3;
  std::uint64_t arena = 64ull << 20, budget = 1ull << 30;
  bool fixed = false;
};

std::string host() {
  const char* h = std::getenv("RIOMESH_RDMA_ADDR");
  return h ? h : "127.0.0.1";
}

riomesh::config::settings node(const std::string& name, std::uint64_t arena,
                               std::uint64_t arena_min, std::uint64_t budget) {
  riomesh::config::settings s;
  s.node.name = name;
  s.node.listen = {host(), 0};
  s.cluster.secret = "arena-memory-bench: every node is this program";
  s.channel.arena = arena;
  s.channel.arena_min = arena_min;
  s.memory.arena_budget = budget;
  s.runtime.threads = 1;
  s.cluster.max_sessions = 4096;
  s.logging.level = riomesh::config::log_level::error;
  return s;
}

// The hub: publishes a sink that answers every message, prints its port,
// and runs until its stdin closes.
int hub(std::uint64_t arena, std::uint64_t arena_min, std::uint64_t budget) {
  riomesh::runtime rt{node("hub", arena, arena_min, budget)};
  rt.publish(rt.system().spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](sink_atom, std::uint64_t seq, const riomesh::buffer&) { return seq; }};
  }),
             "sink");
  std::printf("ready %u\n", static_cast<unsigned>(rt.port()));
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) > 0) {
  }
  return 0;
}

// A group of idle peers (--idle): `count` runtimes named from `first` on,
// each connected to the hub's sink; says "connected", then holds them
// until its stdin closes.
int peer_group(std::size_t count, std::uint16_t port, std::size_t first, std::uint64_t arena,
               std::uint64_t arena_min, std::uint64_t budget) {
  std::vector<std::unique_ptr<riomesh::runtime>> peers;
  for (std::size_t i = 0; i < count; ++i) {
    peers.push_back(std::make_unique<riomesh::runtime>(
        node("peer-" + std::to_string(first + i), arena, arena_min, budget)));
    auto s = peers.back()->remote_actor({host(), port}, "sink", std::chrono::seconds(60));
    if (!s) {
      std::printf("failed peer %zu: %s\n", first + i, to_string(s.error()).c_str());
      std::fflush(stdout);
      return 1;
    }
  }
  std::printf("connected %zu\n", count);
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) > 0) {
  }
  // Gone at once, as if killed: 200 runtimes stopping in order, one after
  // the other, take minutes, and only the hub is measured.
  ::_exit(0);
}

// A child (the hub, or a group of peers): its stdin is ours; closing it
// ends the child, which is waited for.
struct child_process {
  pid_t pid = -1;
  int to = -1;
  std::uint16_t port = 0;  // the hub's
  ~child_process() {
    if (to >= 0)
      ::close(to);
    if (pid > 0) {
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
  }
};

// This program again as a child (`args` after its name), its stdin ours
// to close and its first line of output in `line`. Every pipe is
// close-on-exec: no child holds another's stdin open.
std::unique_ptr<child_process> start_child(const std::vector<std::string>& args,
                                           std::string& line) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  auto h = std::make_unique<child_process>();
  h->pid = ::fork();
  if (h->pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    std::vector<char*> argv{const_cast<char*>("arena_memory_bench")};
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  h->to = in[1];
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n')
    line += c;
  ::close(out[0]);
  return h;
}

std::unique_ptr<child_process> start_hub(const options& o, std::uint64_t arena_min) {
  std::string line;
  auto h = start_child(
      {"--hub", std::to_string(o.arena), std::to_string(arena_min), std::to_string(o.budget)},
      line);
  if (line.rfind("ready ", 0) != 0)
    throw std::runtime_error("the hub did not start: '" + line + "'");
  h->port = static_cast<std::uint16_t>(std::stoul(line.substr(6)));
  return h;
}

// The hub's resident and pinned memory now, in KiB.
struct memory {
  std::uint64_t rss = 0, pinned = 0;
};
memory of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  memory m;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0)
      m.rss = std::stoull(line.substr(6));
    else if (line.rfind("VmPin:", 0) == 0)
      m.pinned = std::stoull(line.substr(6));
  }
  return m;
}

// The hub settles (arenas shrink once a period passes without use).
memory settled(pid_t pid, std::chrono::milliseconds wait) {
  std::this_thread::sleep_for(wait);
  return of(pid);
}

struct peer {
  std::unique_ptr<riomesh::runtime> rt;
  caf::actor sink;
  // Sent again and again: one registration per peer on rdma. A buffer
  // from each runtime's pool would have its 64 MiB slab registered whole,
  // 16 GiB pinned in the peers' process at 256 peers.
  riomesh::buffer payload;
};

void row(const char* mode, std::size_t n, const char* phase, const memory& base, const memory& now,
         double rate) {
  auto per = [&](std::uint64_t a, std::uint64_t b) {
    return (static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(n) / 1024.0;
  };
  std::printf("%-9s %5zu  %-5s  %9.1f  %9.1f  %8.3f  %8.3f", mode, n, phase, now.rss / 1024.0,
              now.pinned / 1024.0, per(base.rss, now.rss), per(base.pinned, now.pinned));
  if (rate > 0)
    std::printf("  %9.0f", rate);
  std::printf("\n");
  std::fflush(stdout);
}

void run(const options& o, bool fixed, std::size_t n) {
  auto arena_min = fixed ? 0 : riomesh::config::channel_settings{}.arena_min;
  auto hub = start_hub(o, arena_min);
  auto base = settled(hub->pid, std::chrono::milliseconds(200));
  const char* mode = fixed ? "fixed" : "by demand";
  std::vector<peer> peers(n);
  for (std::size_t i = 0; i < n; ++i) {
    peers[i].rt = std::make_unique<riomesh::runtime>(
        node("peer-" + std::to_string(i), o.arena, arena_min, o.budget));
    auto s = peers[i].rt->remote_actor({host(), hub->port}, "sink", std::chrono::seconds(30));
    if (!s) {
      // Fixed arenas: the budget admits budget / arena sessions.
      std::printf("%-9s %5zu  the hub refused peer %zu: %s\n", mode, n, i,
                  to_string(s.error()).c_str());
      return;
    }
    peers[i].sink = *s;
  }
  row(mode, n, "idle", base, settled(hub->pid, std::chrono::milliseconds(1500)), 0);
  // Busy: each peer a window of requests, answered one by one.
  std::atomic<bool> sampling{true};
  memory peak = of(hub->pid);
  std::thread sampler([&] {
    while (sampling) {
      auto m = of(hub->pid);
      peak.rss = std::max(peak.rss, m.rss);
      peak.pinned = std::max(peak.pinned, m.pinned);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::atomic<std::uint64_t> done{0}, failed{0};
  auto until = clock_type::now() + std::chrono::duration<double>(o.seconds);
  std::vector<std::thread> drivers;
  // A few threads drive all the peers, each its share in turn.
  std::size_t threads = std::min<std::size_t>(n, 8);
  for (std::size_t t = 0; t < threads; ++t)
    drivers.emplace_back([&, t] {
      std::vector<std::unique_ptr<caf::scoped_actor>> selves;
      for (std::size_t i = t; i < n; i += threads)
        selves.push_back(std::make_unique<caf::scoped_actor>(peers[i].rt->system()));
      std::vector<std::size_t> out(selves.size(), 0);
      std::uint64_t seq = 0;
      while (clock_type::now() < until) {
        for (std::size_t k = 0; k < selves.size(); ++k) {
          auto& self = *selves[k];
          auto& p = peers[t + k * threads];
          while (out[k] < o.window) {
            // One-way: the sink's answer comes back as a message (a
            // blocking receive would not match a response to a request).
            if (p.payload.size() != o.size)
              p.payload = riomesh::buffer::heap(o.size);
            self->send(p.sink, sink_atom::value, seq++, p.payload);
            ++out[k];
          }
          self->receive([&](std::uint64_t) { ++done; },
                        caf::after(std::chrono::seconds(30)) >> [&] { ++failed; });
          --out[k];
        }
      }
      for (std::size_t k = 0; k < selves.size(); ++k)
        for (; out[k] > 0; --out[k])
          (*selves[k])
              ->receive([&](std::uint64_t) { ++done; },
                        caf::after(std::chrono::seconds(30)) >> [&] { ++failed; });
    });
  for (auto& d : drivers)
    d.join();
  sampling = false;
  sampler.join();
  row(mode, n, "busy", base, peak, static_cast<double>(done) / o.seconds);
  if (failed)
    std::printf("          %llu answers never came\n",
                static_cast<unsigned long long>(failed.load()));
  // Idle again: arenas sized by demand shrink back after a period, and
  // the receive pool lets go of what it kept after five seconds more.
  row(mode, n, "after", base, settled(hub->pid, std::chrono::milliseconds(10000)), 0);
  peers.clear();
}

// One hub, N idle peers in groups of child processes: what each costs it.
void run_idle(const options& o, std::size_t n) {
  auto arena_min = riomesh::config::channel_settings{}.arena_min;
  auto hub = start_hub(o, arena_min);
  auto base = settled(hub->pid, std::chrono::milliseconds(200));
  constexpr std::size_t per_group = 200;
  std::vector<std::unique_ptr<child_process>> groups;
  for (std::size_t first = 0; first < n; first += per_group) {
    auto count = std::min(per_group, n - first);
    std::string line;
    auto g = start_child(
        {"--peers", std::to_string(count), std::to_string(hub->port), std::to_string(first),
         std::to_string(o.arena), std::to_string(arena_min), std::to_string(o.budget)},
        line);
    if (line.rfind("connected", 0) != 0) {
      std::printf("by demand %5zu  a group of peers from %zu did not connect: '%s'\n", n, first,
                  line.c_str());
      return;
    }
    groups.push_back(std::move(g));
  }
  row("by demand", n, "idle", base, settled(hub->pid, std::chrono::milliseconds(1500)), 0);
  groups.clear();  // stdin closes: each group lets go of its peers
}

std::vector<std::size_t> list_of(const std::string& text) {
  std::vector<std::size_t> out;
  for (std::size_t at = 0; at < text.size();) {
    auto comma = text.find(',', at);
    out.push_back(std::stoul(text.substr(at, comma - at)));
    at = comma == std::string::npos ? text.size() : comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // Hundreds of runtimes in one process, each with descriptors of its
  // own and of its connections: the soft limit (often 1024) is raised to
  // 65536 where allowed (root, as in the test VM), else to the hard
  // limit. The children inherit it.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < 65536) {
    rlimit wanted{65536, std::max<rlim_t>(files.rlim_max, 65536)};
    if (::setrlimit(RLIMIT_NOFILE, &wanted) != 0) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
    }
  }
  if (argc == 5 && std::strcmp(argv[1], "--hub") == 0)
    return hub(std::stoull(argv[2]), std::stoull(argv[3]), std::stoull(argv[4]));
  if (argc == 8 && std::strcmp(argv[1], "--peers") == 0)
    return peer_group(std::stoul(argv[2]), static_cast<std::uint16_t>(std::stoul(argv[3])),
                      std::stoul(argv[4]), std::stoull(argv[5]), std::stoull(argv[6]),
                      std::stoull(argv[7]));
  options o;
  std::size_t idle = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc)
        throw std::invalid_argument(a + " needs a value");
      return std::string{argv[++i]};
    };
    if (a == "--connections")
      o.connections = list_of(next());
    else if (a == "--size")
      o.size = std::stoul(next());
    else if (a == "--window")
      o.window = std::stoul(next());
    else if (a == "--seconds")
      o.seconds = std::stod(next());
    else if (a == "--arena")
      o.arena = std::stoull(next());
    else if (a == "--budget")
      o.budget = std::stoull(next());
    else if (a == "--fixed")
      o.fixed = true;
    else if (a == "--idle")
      idle = std::stoul(next());
    else {
      std::fprintf(stderr,
                   "usage: arena_memory_bench [--connections 1,16,64,256] [--size BYTES] "
                   "[--window W] [--seconds S] [--arena BYTES] [--budget BYTES] [--fixed] "
                   "[--idle N]\n");
      return 2;
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
  std::printf(
      "one hub on %s, %s arenas (channel.arena %s, budget %s), busy: windows of %zu "
      "requests of %s per peer\n",
      std::getenv("RIOMESH_RDMA_ADDR") ? "rdma" : "tcp loopback",
      o.fixed ? "fixed and by-demand" : "by-demand", size_name(o.arena).c_str(),
      size_name(o.budget).c_str(), o.window, size_name(o.size).c_str());
  std::printf("%-9s %5s  %-5s  %9s  %9s  %8s  %8s  %9s\n", "arenas", "peers", "phase", "RSS MiB",
              "pin MiB", "RSS/peer", "pin/peer", "req/s");
  std::printf("%-9s %5s  %-5s  %9s  %9s  %8s  %8s\n", "", "", "", "", "", "MiB", "MiB");
  if (idle > 0) {
    run_idle(o, idle);
    return 0;
  }
  for (auto n : o.connections) {
    if (o.fixed)
      run(o, true, n);
    run(o, false, n);
  }
}
