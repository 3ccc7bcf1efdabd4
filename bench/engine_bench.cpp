// engine_bench: what the rsocket engine itself costs, per message and per
// byte, with the NIC replaced by an in-process loopback that places bytes
// with memcpy and completes every request at once. Fabric figures (verbs in
// the VM, tcp) can be read against these: whatever they add is the fabric's.
//
// Each case runs twice: once with the loopback placing bytes (memcpy) and
// once without; the engine column is the second, placement the difference.
// A stream send includes the engine's own copy into its staging ring, which
// is rsockets' design; riowrite is zero-copy.
//
// Usage: engine_bench [--quick]
#include "size_name.hpp"

#include <riomesh/channels/engine/engine.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace riomesh;
using namespace riomesh::engine;
using clock_type = std::chrono::steady_clock;

namespace {

// One side's memory and engine. Keys are unused by the loopback.
struct side {
  std::vector<unsigned char> target_list, recv_ring, send_ring;
  std::unique_ptr<riomesh::engine::engine> eng;
  std::vector<riomesh::engine::work> pending;
  std::vector<event> events;
  std::uint32_t receives = 0;

  side(const params& p, std::size_t ring)
      : target_list(wire::target_list_size(p.iomap_slots)), recv_ring(ring), send_ring(ring) {
    eng = std::make_unique<riomesh::engine::engine>(
        p, regions{{target_list.data(), target_list.size(), 1, 1},
                   {recv_ring.data(), recv_ring.size(), 2, 2},
                   {send_ring.data(), send_ring.size(), 3, 3}});
  }
};

// Whether the loopback copies payload bytes at all: run once with and once
// without, and the difference is what placement costs, the rest the engine.
bool place_bytes = true;

// Executes every pending request of `from` against `to` immediately.
void deliver(side& from, side& to) {
  from.pending.clear();
  from.eng->take_work(from.pending);
  for (const auto& w : from.pending) {
    if (w.kind == work_kind::post_recv) {
      from.receives += w.recv_count;
      continue;
    }
    auto* dst = reinterpret_cast<unsigned char*>(w.remote_addr);
    // SGL and iomap entries are protocol state: always placed.
    bool payload = w.kind == work_kind::write || wire::decode(w.imm).code == wire::op::data;
    for (std::uint8_t i = 0; (place_bytes || !payload) && i < w.num_sge; ++i) {
      std::memcpy(dst, reinterpret_cast<const void*>(w.sge[i].addr), w.sge[i].length);
      dst += w.sge[i].length;
    }
    if (w.kind == work_kind::write_with_imm) {
      --to.receives;
      to.eng->on_recv_completion(
          {w.imm, static_cast<std::uint32_t>(w.length()), completion_status::success, {}});
    }
    from.eng->on_send_completion({w.wr_id, completion_status::success, {}});
  }
}

struct result {
  double ns_per_msg;
  double work_per_msg;
};

params bench_params() {
  params p;
  p.iomap_slots = 1;
  return p;
}

result stream(std::size_t size, std::size_t messages) {
  params p = bench_params();
  std::size_t ring = 4u << 20;  // room for 1 MiB messages in flight
  side a(p, ring), b(p, ring);
  a.eng->start(b.eng->local_conn_data());
  b.eng->start(a.eng->local_conn_data());
  std::vector<unsigned char> payload(size, 0x5a);
  std::size_t sent = 0, offset = 0, posted = 0;
  std::uint64_t received = 0;
  auto start = clock_type::now();
  while (received < std::uint64_t{size} * messages) {
    while (sent < messages) {
      auto r = a.eng->send(payload.data() + offset, size - offset);
      offset += r.bytes;
      if (offset == size) {
        ++sent;
        offset = 0;
      }
      if (r.st != status::ok)
        break;
    }
    posted += a.eng->state().data_in_flight;
    deliver(a, b);
    for (auto [p, n] = b.eng->peek(); n > 0; std::tie(p, n) = b.eng->peek()) {
      received += n;
      b.eng->consume(n);
    }
    deliver(b, a);
  }
  double ns = std::chrono::duration<double, std::nano>(clock_type::now() - start).count();
  return {ns / messages, double(posted) / messages};
}

result iowrite(std::size_t size, std::size_t messages) {
  params p = bench_params();
  side a(p, 1u << 20), b(p, 1u << 20);
  a.eng->start(b.eng->local_conn_data());
  b.eng->start(a.eng->local_conn_data());
  std::vector<unsigned char> target(size), source(size, 0x33);
  b.eng->riomap({target.data(), target.size(), 9, 9}, true, 0);
  deliver(b, a);
  deliver(a, b);
  local_sge src{reinterpret_cast<std::uint64_t>(source.data()), static_cast<std::uint32_t>(size),
                7};
  auto start = clock_type::now();
  std::size_t done = 0;
  for (std::size_t m = 0; m < messages; ++m) {
    auto r = a.eng->riowrite(src, 0, m + 1);
    if (r.bytes != size)
      std::fprintf(stderr, "riowrite: %s\n", to_string(r.st));
    deliver(a, b);
    a.events.clear();
    a.eng->take_events(a.events);
    for (const auto& e : a.events)
      done += e.kind == event_kind::iowrite_done;
  }
  double ns = std::chrono::duration<double, std::nano>(clock_type::now() - start).count();
  if (done != messages)
    std::fprintf(stderr, "iowrite_done events: %zu of %zu\n", done, messages);
  return {ns / messages, 1};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::string{argv[1]} == "--quick";
  const std::size_t sizes[] = {64, 4096, 65536, 1u << 20};
  std::printf(
      "rsocket engine over an in-process loopback: completions are instant, and\n"
      "placement (the NIC's part) is a memcpy, measured apart from the engine.\n");
  std::printf("%-9s %-8s %9s %14s %15s %12s %8s\n", "op", "size", "messages", "engine ns/msg",
              "placement ns/msg", "engine GB/s", "WRs/msg");
  for (const char* op : {"send", "riowrite"}) {
    double engine_ns[4];
    for (int i = 0; i < 4; ++i) {
      auto size = sizes[i];
      std::size_t total = quick ? (8u << 20) : (1u << 30);
      std::size_t messages =
          std::clamp<std::size_t>(total / size, quick ? 100 : 20000, quick ? 2000 : 2000000);
      auto run = [&](bool place) {
        place_bytes = place;
        return std::string{op} == "send" ? stream(size, messages) : iowrite(size, messages);
      };
      auto engine_only = run(false);
      auto with_placement = run(true);
      engine_ns[i] = engine_only.ns_per_msg;
      std::printf("%-9s %-8s %9zu %14.1f %15.1f %12.2f %8.1f\n", op, size_name(size).c_str(),
                  messages, engine_only.ns_per_msg,
                  with_placement.ns_per_msg - engine_only.ns_per_msg,
                  double(size) / engine_only.ns_per_msg, engine_only.work_per_msg);
    }
    std::printf("%-9s per message %.0f ns (64 B); per byte %.4f ns (slope 64 KiB -> 1 MiB)\n", op,
                engine_ns[0], (engine_ns[3] - engine_ns[2]) / double(sizes[3] - sizes[2]));
  }
  return 0;
}
