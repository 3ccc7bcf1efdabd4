// riomesh's runtime as the bench drives it: a published sink that answers
// every request with its sequence number (or its payload, for "echo") and
// counts one-way messages, and client actors that keep a window of requests
// open or stream one way. The
// payload is one pool buffer, sent again and again: placed into the
// server's arena each time, never copied.
#include "measure.hpp"
#include "oneway_driver.hpp"
#include "process_io.hpp"
#include "remote.hpp"
#include "window_driver.hpp"

#include <riomesh/buffer_inspect.hpp>
#include <riomesh/runtime.hpp>

#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <vector>

namespace bench {
namespace {

struct payload {
  std::uint64_t seq = 0;
  riomesh::buffer data;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, payload& x) {
  return f(caf::meta::type_name("bench::payload"), x.seq, x.data);
}

// A one-way message: no answer, an acknowledgement every `ack_every`.
struct bulk {
  std::uint32_t ack_every = 1;
  riomesh::buffer data;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bulk& x) {
  return f(caf::meta::type_name("bench::bulk"), x.ack_every, x.data);
}

std::string server_name(std::size_t index) {
  return "bench-server-" + std::to_string(index);
}

void add_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<payload>("bench::payload");
  cfg.add_message_type<bulk>("bench::bulk");
}

riomesh::config::settings node(const std::string& name, const ports& peers,
                               const std::string& kind) {
  bool dmabuf = kind == "riomesh-dmabuf";
  riomesh::config::settings s;
  s.node.name = name;
  s.node.listen = {"127.0.0.1", 0};
  s.node.fabric = riomesh::config::fabric_kind::automatic;
  if (const char* host = std::getenv("RIOMESH_RDMA_ADDR"))
    s.node.listen.host = host;  // in the VM: the address rxe serves
  for (std::size_t i = 0; i < peers.size(); ++i)
    s.cluster.peers.push_back({server_name(i), {server_address(), peers[i]}});
  // Authenticated, as a deployment off loopback must be (in the VM, too);
  // the handshake is all it costs.
  s.cluster.secret = "actor-bench: both sides are this program";
  s.channel.arena = 256ull << 20;  // a window of 16 MiB samples fits
  s.logging.level = riomesh::config::log_level::warn;
  s.runtime.policy = stealing_policy() ? riomesh::config::scheduler_policy::stealing
                                       : riomesh::config::scheduler_policy::sharing;
  s.runtime.threads = static_cast<std::uint32_t>(scheduler_threads());
  if (dmabuf)
    s.memory.provider = riomesh::config::memory_provider::dmabuf;
  // "riomesh-tls": the stream after the handshake in TLS records, as off
  // loopback by default; the others as on loopback (in the clear).
  s.channel.encrypt =
      kind == "riomesh-tls" ? riomesh::config::encryption::on : riomesh::config::encryption::off;
  if (const char* n = std::getenv("ACTOR_BENCH_ARENA_MIN"))  // --arena-min (0: fixed arenas)
    s.channel.arena_min = std::stoull(n);
  if (const char* n = std::getenv("ACTOR_BENCH_RENDEZVOUS"))  // --rendezvous (0: off)
    s.channel.rendezvous = std::stoull(n);
  if (const char* us = std::getenv("ACTOR_BENCH_POLLING_US"))  // --polling-us
    s.channel.polling_time = std::chrono::microseconds(std::stoul(us));
  if (const char* us = std::getenv("ACTOR_BENCH_MAX_POLLING_US"))  // --max-polling-us
    s.channel.max_polling_time = std::chrono::microseconds(std::stoul(us));
  if (const char* us = std::getenv("ACTOR_BENCH_HANDLER_US"))  // --handler-limit-us
    s.runtime.io_handler_limit = std::chrono::microseconds(std::stoul(us));
  return s;
}

caf::behavior sink(caf::stateful_actor<sink_counts>* self) {
  return {
      [](const payload& p) { return p.seq; },
      [](echo_atom, payload& p) { return std::move(p); },  // placed back from our arena
      [](std::uint64_t x) { return x; },
      [self](const bulk& b) { self->state.counted(self, b.ack_every); },
      [self](flush_atom) { return self->state.flushed(self); },
  };
}

std::uint64_t copied(const riomesh::stat_report& r) {
  return r.value("node.payload_copied_in") + r.value("node.payload_copied_out") +
         r.peer_sum("streamed_bytes_in") + r.peer_sum("staged_bytes_in") +
         r.peer_sum("staged_bytes_out");
}

riomesh::stat_report report_of(riomesh::runtime& rt, const riomesh::admin_actor& admin) {
  caf::scoped_actor self{rt.system()};
  riomesh::stat_report out;
  self->request(admin, std::chrono::seconds(10), riomesh::report_atom::value)
      .receive([&](riomesh::stat_report& r) { out = std::move(r); }, [](caf::error&) {});
  return out;
}

// With --counters: where a process's messages went between threads, per
// message it delivered (the client's: answers; the server's: requests).
void print_counters(const char* who, const riomesh::stat_report& r) {
  if (!std::getenv("ACTOR_BENCH_COUNTERS"))
    return;
  double in = std::max<double>(
      1, static_cast<double>(r.value("node.messages_in") + r.value("node.responses_in")));
  std::fprintf(stderr,
               "counters %s: %.0f in; per message: outbox pushes %.2f, mailbox enqueues %.2f, "
               "turns on the I/O thread %.2f, handed to workers %.2f, I/O thread wakes %.2f, "
               "doorbells %.2f, empty spins %.1f, turns too long %.2f\n",
               who, in, r.value("node.connection_enqueues") / in,
               r.value("node.mailbox_enqueues") / in, r.value("node.io_turns") / in,
               r.value("node.io_handed") / in, r.value("node.io_wakes") / in,
               r.value("node.io_doorbells") / in, r.value("node.io_spins") / in,
               r.value("node.io_heavy") / in);
}

}  // namespace

bool is_riomesh(const std::string& kind) {
  return kind == "riomesh" || kind == "riomesh-dmabuf" || kind == "riomesh-gather" ||
         kind == "riomesh-tls";
}

// `whole` as a buffer gathered from ACTOR_BENCH_GATHER (default 16) equal
// slices of it, the last taking the rest.
riomesh::buffer gathered(const riomesh::buffer& whole) {
  const char* n = std::getenv("ACTOR_BENCH_GATHER");
  std::size_t pieces = std::clamp<std::size_t>(n ? std::stoul(n) : 16, 1, whole.size());
  std::size_t each = whole.size() / pieces;
  std::vector<riomesh::buffer> parts;
  for (std::size_t i = 0; i < pieces; ++i)
    parts.push_back(whole.slice(i * each, i + 1 == pieces ? whole.size() - i * each : each));
  return riomesh::buffer::gather(std::move(parts));
}

int riomesh_serve(const std::string& kind, int index) {
  riomesh::runtime rt{node(server_name(static_cast<std::size_t>(index)), {}, kind), add_types};
  rt.publish(rt.system().spawn(sink), "sink");
  announce_ready(rt.port());
  serve_until_stdin_closes();
  print_counters("server", report_of(rt, rt.admin()));
  rt.stop();
  return 0;
}

int riomesh_drive(const std::string& kind, const ports& to, const job& j) {
  riomesh::runtime rt{node("bench-client-" + std::to_string(::getpid()), to, kind), add_types};
  std::vector<caf::actor> sinks;
  std::vector<riomesh::admin_actor> admins;
  for (std::size_t i = 0; i < to.size(); ++i) {
    auto sink = rt.remote_actor(server_name(i), "sink", std::chrono::seconds(10));
    auto admin = rt.remote_actor<riomesh::admin_actor>(server_name(i), riomesh::admin_name,
                                                       std::chrono::seconds(10));
    if (!sink || !admin) {
      std::fprintf(stderr, "riomesh client: %s\n",
                   rt.system().render(sink ? admin.error() : sink.error()).c_str());
      return 1;
    }
    sinks.push_back(*sink);
    admins.push_back(*admin);
  }
  auto data = rt.allocate(j.size);
  for (std::size_t i = 0; i < j.size; ++i)
    data.data()[i] = static_cast<unsigned char>(i * 31);
  if (kind == "riomesh-gather")
    data = gathered(data);
  auto ping = [](caf::actor sink) {
    return [sink](auto* self, std::uint64_t seq) {
      return self->request(sink, std::chrono::seconds(30), seq);
    };
  };
  auto post = [&data](caf::actor sink) {
    return [sink, data](auto* self, std::uint64_t seq) {
      return self->request(sink, std::chrono::seconds(60), payload{seq, data});
    };
  };
  struct stream {
    caf::actor sink;
    bulk message;
    void post(caf::event_based_actor* self) const { self->send(sink, message); }
    auto flush(caf::event_based_actor* self) const {
      return self->request(sink, std::chrono::seconds(60), flush_atom::value);
    }
  };
  auto echo = [&data](caf::actor sink) {
    return [sink, data](auto* self, std::uint64_t seq) {
      return self->request(sink, std::chrono::seconds(60), echo_atom::value, payload{seq, data});
    };
  };
  outcome o;
  if (j.pattern == "echo") {
    o = drive_targets<payload>(rt.system(), j, sinks, echo);
  } else if (j.pattern == "oneway") {
    std::vector<stream> streams;
    for (auto& s : sinks)
      streams.push_back({s, bulk{ack_every(j), data}});
    o = drive_oneway(rt.system(), j, streams);
  } else {
    o = j.pattern == "rtt" ? drive_targets(rt.system(), j, sinks, ping)
                           : drive_targets(rt.system(), j, sinks, post);
  }
  auto mine = report_of(rt, rt.admin());
  print_counters("client", mine);
  o.copied = copied(mine);
  for (auto& a : admins)
    o.copied += copied(report_of(rt, a));
  o.known_copies = true;
  print(o);
  rt.stop();
  return o.seconds > 0 ? 0 : 1;
}

}  // namespace bench
