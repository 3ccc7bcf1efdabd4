// What moving bytes by grant costs beside pushing them in messages. Two
// nodes in one process, one connection (tcp on loopback, or rdma where a
// device serves RIOMESH_RDMA_ADDR, as in the VM); node-b moves payloads of
// each size to or from node-a, a window of them in flight, three ways:
//   push:        a request carrying a pool buffer, placed into node-a's
//                arena, answered by node-a's actor;
//   grant write: the bytes written into a region node-a lent (a slot per
//                window place), then a `then` message to node-a's actor;
//   grant read:  node-b reads a slot of the region into its own buffer:
//                one-sided on rdma (RDMA READs, node-a's CPU idle), and,
//                beside it, served by the owner's I/O thread writing the
//                bytes back, as on tcp (a second pair of nodes with
//                channel.read_depth 0).
// Prints the rate and the process's CPU per payload (both nodes) of each,
// and the grant's rates as ratios of push's. Then the latency, one at a
// time: a push answered by node-a's actor against a grant write whose
// `then` message node-a's actor answers (the answer marks that it has it),
// and a read of the payload (rdma: one-sided and served).
//   grant_bench [--seconds S] [--window W] [--sizes 65536,1048576,...]
#include "size_name.hpp"

#include <riomesh/buffer_inspect.hpp>
#include <riomesh/runtime.hpp>

#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using then_atom = caf::atom_constant<caf::atom("gb_then")>;
using echo_atom = caf::atom_constant<caf::atom("gb_echo")>;
using clock_type = std::chrono::steady_clock;

struct payload {
  std::uint64_t seq = 0;
  riomesh::buffer data;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, payload& x) {
  return f(caf::meta::type_name("grant_bench::payload"), x.seq, x.data);
}

riomesh::config::settings node(const std::string& name, const std::string& peer,
                               std::uint16_t peer_port, std::uint32_t read_depth) {
  riomesh::config::settings s;
  s.node.name = name;
  s.node.listen = {"127.0.0.1", 0};
  if (const char* host = std::getenv("RIOMESH_RDMA_ADDR"))
    s.node.listen.host = host;
  if (peer_port != 0)
    s.cluster.peers.push_back({peer, {s.node.listen.host, peer_port}});
  s.channel.read_depth = read_depth;
  s.cluster.secret = "grant-bench: both nodes are this program";
  s.channel.arena = 256ull << 20;
  s.logging.level = riomesh::config::log_level::warn;
  return s;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

struct figure {
  double mib_per_s = 0, cpu_us = 0;
  bool ok = true;
};

// Runs `start(seq, slot)` keeping `window` in flight, `finish()` taking one
// back (false: it failed), for `seconds`.
template <class Start, class Finish>
figure measure(std::size_t size, std::size_t window, double seconds, Start start, Finish finish) {
  std::deque<std::size_t> slots;
  std::uint64_t seq = 0, done = 0;
  auto t0 = clock_type::now();
  auto c0 = cpu_seconds();
  auto deadline = t0 + std::chrono::duration<double>(seconds);
  figure f;
  while (f.ok) {
    bool more = clock_type::now() < deadline;
    while (more && slots.size() < window) {
      auto slot = seq % window;
      start(seq++, slot);
      slots.push_back(slot);
    }
    if (slots.empty())
      break;
    f.ok = finish(slots.front());
    slots.pop_front();
    ++done;
  }
  double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
  f.mib_per_s = static_cast<double>(done * size) / secs / (1 << 20);
  f.cpu_us = (cpu_seconds() - c0) / static_cast<double>(done) * 1e6;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  std::size_t window = 8;
  std::vector<std::size_t> sizes{64u << 10, 256u << 10, 1u << 20, 16u << 20};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--seconds")
      seconds = std::stod(argv[i + 1]);
    else if (a == "--window")
      window = std::stoul(argv[i + 1]);
    else if (a == "--sizes") {
      sizes.clear();
      std::string list = argv[i + 1];
      for (std::size_t at = 0; at < list.size();) {
        auto comma = list.find(',', at);
        sizes.push_back(std::stoul(list.substr(at, comma - at)));
        at = comma == std::string::npos ? list.size() : comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: grant_bench [--seconds S] [--window W] [--sizes N,N,...]\n");
      return 2;
    }
  }
  auto types = [](caf::actor_system_config& cfg) {
    cfg.add_message_type<payload>("grant_bench::payload");
  };
  bool rdma = std::getenv("RIOMESH_RDMA_ADDR") != nullptr;
  riomesh::runtime a{node("node-a", "", 0, 16), types};
  riomesh::runtime b{node("node-b", "node-a", a.port(), 16), types};
  // Where reads are one-sided, a pair whose owner serves them, to compare.
  std::unique_ptr<riomesh::runtime> c, d;
  if (rdma) {
    c = std::make_unique<riomesh::runtime>(node("node-c", "", 0, 0), types);
    d = std::make_unique<riomesh::runtime>(node("node-d", "node-c", c->port(), 0), types);
  }
  auto thens = std::make_shared<std::atomic<std::uint64_t>>(0);
  a.publish(a.system().spawn([thens](caf::event_based_actor* self) -> caf::behavior {
    return {[](const payload& p) { return p.seq; }, [thens](then_atom, std::uint64_t) { ++*thens; },
            [self](echo_atom, std::uint64_t seq) {
              self->send(caf::actor_cast<caf::actor>(self->current_sender()), echo_atom::value,
                         seq);
            }};
  }),
            "sink");
  auto sink = b.remote_actor("node-a", "sink", std::chrono::seconds(10));
  if (!sink) {
    std::fprintf(stderr, "grant_bench: %s\n", b.system().render(sink.error()).c_str());
    return 1;
  }
  std::printf("grant_bench: window %zu, %.1f s per case, on %s\n", window, seconds,
              rdma ? "rdma (reads one-sided; served: channel.read_depth 0)" : "tcp");
  std::printf("%-8s %14s %14s %7s %14s %7s %14s %10s %10s %10s %10s\n", "size", "push MiB/s",
              "write MiB/s", "ratio", "read MiB/s", "ratio", "served MiB/s", "push us", "write us",
              "read us", "served us");
  caf::scoped_actor self{b.system()};
  auto me = caf::actor_cast<caf::actor>(self);
  int status = 0;
  auto wait_status = [](caf::scoped_actor& s) {
    bool ok = false;
    s->receive([&](riomesh::grant_done_atom, std::uint64_t, riomesh::grant_status st,
                   std::string&) { ok = st == riomesh::grant_status::ok; },
               caf::after(std::chrono::seconds(60)) >> [] {});
    return ok;
  };
  // A figure of the served pair: only where reads are one-sided.
  auto maybe = [&](double v) {
    char out[32];
    std::snprintf(out, sizeof out, "%.1f", v);
    return rdma ? std::string{out} : std::string{"-"};
  };
  // A grant of `bytes` of `owner`'s memory to `holder`, once they are
  // connected.
  auto lend = [](riomesh::runtime& owner, const std::string& holder, std::size_t bytes,
                 riomesh::grant_rights rights) {
    auto region = owner.allocate(bytes);
    auto g = owner.make_grant(holder, region, rights);
    for (int i = 0; !g && i < 100; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      g = owner.make_grant(holder, region, rights);
    }
    return g;
  };
  // `holder` reading slots of `g` of `size` bytes, `window` in flight.
  auto reads = [&](riomesh::runtime& holder, const riomesh::grant& g, std::size_t size) {
    caf::scoped_actor s{holder.system()};
    auto to = caf::actor_cast<caf::actor>(s);
    std::vector<riomesh::buffer> into;
    for (std::size_t i = 0; i < window; ++i)
      into.push_back(holder.allocate(size));
    return measure(
        size, window, seconds,
        [&](std::uint64_t, std::size_t slot) { holder.read(g, slot * size, into[slot], to); },
        [&](std::size_t) { return wait_status(s); });
  };
  for (auto size : sizes) {
    auto region = a.allocate(size * window);
    auto lent = a.make_grant("node-b", region, riomesh::grant_rights::read_write);
    if (!lent) {
      std::fprintf(stderr, "grant_bench: %s\n", a.system().render(lent.error()).c_str());
      return 1;
    }
    auto data = b.allocate(size);
    for (std::size_t i = 0; i < size; ++i)
      data.data()[i] = static_cast<unsigned char>(i * 7);

    std::deque<caf::response_handle<caf::blocking_actor, caf::message, true>> waiting;
    auto push = measure(
        size, window, seconds,
        [&](std::uint64_t seq, std::size_t) {
          waiting.push_back(self->request(*sink, std::chrono::seconds(60), payload{seq, data}));
        },
        [&](std::size_t) {
          bool ok = false;
          waiting.front().receive([&](std::uint64_t) { ok = true; }, [&](caf::error&) {});
          waiting.pop_front();
          return ok;
        });
    auto write = measure(
        size, window, seconds,
        [&](std::uint64_t seq, std::size_t slot) {
          b.write(*lent, slot * size, data, me, {*sink, caf::make_message(then_atom::value, seq)});
        },
        [&](std::size_t) { return wait_status(self); });
    auto read = reads(b, *lent, size);
    a.revoke(*lent);
    figure served;
    if (rdma) {
      auto other = lend(*c, "node-d", size * window, riomesh::grant_rights::read);
      served.ok = other && !other->one_sided;
      if (served.ok) {
        served = reads(*d, *other, size);
        c->revoke(*other);
      }
    }
    if (!push.ok || !write.ok || !read.ok || !served.ok) {
      std::fprintf(stderr, "grant_bench: a %s case failed\n", size_name(size).c_str());
      status = 1;
    }
    std::printf("%-8s %14.1f %14.1f %6.2fx %14.1f %6.2fx %14s %10.1f %10.1f %10.1f %10s\n",
                size_name(size).c_str(), push.mib_per_s, write.mib_per_s,
                write.mib_per_s / push.mib_per_s, read.mib_per_s, read.mib_per_s / push.mib_per_s,
                maybe(served.mib_per_s).c_str(), push.cpu_us, write.cpu_us, read.cpu_us,
                maybe(served.cpu_us).c_str());
    std::fflush(stdout);
  }
  std::printf("then messages delivered: %llu\n", static_cast<unsigned long long>(thens->load()));

  // Latency: the median of one-at-a-time round trips, each way.
  std::printf("\n%-8s %14s %14s %7s %14s %14s\n", "size", "push p50 us", "then p50 us", "ratio",
              "read p50 us", "served p50 us");
  for (auto size : sizes) {
    auto region = a.allocate(size);
    auto lent = a.make_grant("node-b", region, riomesh::grant_rights::write);
    auto data = b.allocate(size);
    if (!lent)
      return 1;
    auto median = [&](auto one) {
      std::vector<double> us;
      auto deadline = clock_type::now() + std::chrono::duration<double>(seconds / 2);
      for (std::uint64_t seq = 0; clock_type::now() < deadline || us.size() < 10; ++seq) {
        auto t0 = clock_type::now();
        if (!one(seq))
          return -1.0;
        us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
      }
      std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
      return us[us.size() / 2];
    };
    auto push = median([&](std::uint64_t seq) {
      bool ok = false;
      self->request(*sink, std::chrono::seconds(60), payload{seq, data})
          .receive([&](std::uint64_t) { ok = true; }, [&](caf::error&) {});
      return ok;
    });
    // The status and the then's answer, in either order.
    auto then = median([&](std::uint64_t seq) {
      b.write(*lent, 0, data, me, {*sink, caf::make_message(echo_atom::value, seq)});
      bool status = false, echoed = false, ok = true;
      while (ok && !(status && echoed))
        self->receive(
            [&](riomesh::grant_done_atom, std::uint64_t, riomesh::grant_status st, std::string&) {
              status = true;
              ok = st == riomesh::grant_status::ok;
            },
            [&](echo_atom, std::uint64_t n) { echoed = n == seq; },
            caf::after(std::chrono::seconds(60)) >> [&] { ok = false; });
      return ok;
    });
    a.revoke(*lent);
    // One read at a time, of the whole payload.
    auto read_one = [&](riomesh::runtime& owner, riomesh::runtime& holder,
                        const std::string& holder_name) {
      auto g = lend(owner, holder_name, size, riomesh::grant_rights::read);
      if (!g)
        return -1.0;
      caf::scoped_actor s{holder.system()};
      auto to = caf::actor_cast<caf::actor>(s);
      auto into = holder.allocate(size);
      auto p50 = median([&](std::uint64_t) {
        holder.read(*g, 0, into, to);
        return wait_status(s);
      });
      owner.revoke(*g);
      return p50;
    };
    auto read = read_one(a, b, "node-b");
    auto served = rdma ? read_one(*c, *d, "node-d") : 0.0;
    if (push < 0 || then < 0 || read < 0 || served < 0) {
      std::fprintf(stderr, "grant_bench: a %s latency case failed\n", size_name(size).c_str());
      status = 1;
    }
    std::printf("%-8s %14.1f %14.1f %6.2fx %14.1f %14s\n", size_name(size).c_str(), push, then,
                then / push, read, maybe(served).c_str());
    std::fflush(stdout);
  }
  if (d)
    d->stop();
  if (c)
    c->stop();
  b.stop();
  a.stop();
  return status;
}
