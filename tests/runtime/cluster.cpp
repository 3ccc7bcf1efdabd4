#include "cluster.hpp"

#include <random>

#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>

namespace riomesh::test {

calc_actor::behavior_type calc(calc_actor::pointer) {
  return {[](add_atom, int a, int b) { return a + b; }};
}

namespace {
struct sink_state {
  std::uint64_t count = 0;
  bool in_order = true;
  std::map<caf::actor_addr, std::uint64_t> next;  // per sender
};
}  // namespace

caf::behavior sink(caf::event_based_actor* self) {
  return paced_sink(self, std::chrono::milliseconds(0));
}

caf::behavior paced_sink(caf::event_based_actor* self, std::chrono::milliseconds per_blob) {
  auto st = std::make_shared<sink_state>();
  return {
      [](sum_atom, const buffer& b) { return checksum(b); },
      [](echo_atom, const buffer& b) { return b; },
      [](std::vector<char>& v) {  // serialized, not placed: sent back reversed
        std::reverse(v.begin(), v.end());
        return std::move(v);
      },
      [st, self, per_blob](const blob& b) {
        if (per_blob.count() > 0)
          std::this_thread::sleep_for(per_blob);  // falls behind on purpose
        auto& next = st->next[caf::actor_cast<caf::actor_addr>(self->current_sender())];
        // Strictly increasing: a send refused as congested leaves a gap,
        // but nothing may come twice or out of order.
        if (b.seq < next || !matches(b.data, b.seq))
          st->in_order = false;
        next = b.seq + 1;
        ++st->count;
      },
      [st](count_atom) { return std::make_tuple(st->count, st->in_order); },
  };
}

caf::behavior black_hole(caf::event_based_actor* self) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  return {[=](count_atom) {
    held->push_back(self->make_response_promise());
    return held->back();
  }};
}

std::uint64_t sink_count(caf::scoped_actor& self, const caf::actor& sink, bool& intact) {
  std::uint64_t got = 0;
  self->request(sink, std::chrono::seconds(10), count_atom::value)
      .receive([&](std::uint64_t n, bool ok) { got = n, intact = ok; },
               [&](caf::error& e) {
                 throw std::runtime_error("the sink did not answer: " + self->system().render(e));
               });
  return got;
}

caf::actor spawn_sink(caf::actor_system& sys) {
  return sys.spawn(paced_sink, std::chrono::milliseconds(0));
}

calc_actor spawn_calc(caf::actor_system& sys) {
  return sys.spawn([](calc_actor::pointer self, int) { return calc(self); }, 0);
}

caf::actor spawn_black_hole(caf::actor_system& sys) {
  return spawn_fn(sys, black_hole);
}

std::uint64_t checksum(const buffer& b) {
  // Position-dependent, so a shifted or reordered payload differs.
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < b.size(); i += 1) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

void fill(buffer& b, std::uint64_t seed) {
  std::uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (std::size_t i = 0; i < b.size(); ++i) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    b[i] = static_cast<unsigned char>(x >> 56);
  }
}

bool matches(const buffer& b, std::uint64_t seed) {
  auto want = buffer::heap(b.size());
  fill(want, seed);
  return std::equal(b.begin(), b.end(), want.begin());
}

std::string fabric_under_test() {
  const char* kind = std::getenv("RIOMESH_CHANNEL");
  return kind && std::string{kind} == "rdma" ? "rdma" : "tcp";
}

config::settings node_settings(const std::string& name,
                               std::vector<std::pair<std::string, std::uint16_t>> peers,
                               const std::string& secret) {
  bool rdma = fabric_under_test() == "rdma";
  const char* env = std::getenv("RIOMESH_RDMA_ADDR");
  std::string host = rdma ? (env && *env ? env : "10.77.0.1") : "127.0.0.1";
  config::settings s;
  s.node.name = name;
  s.node.listen = {host, 0};
  s.node.fabric = rdma ? config::fabric_kind::verbs : config::fabric_kind::tcp;
  for (auto& [peer, port] : peers)
    s.cluster.peers.push_back({peer, {host, port}});
  s.cluster.secret = secret;
  s.channel.arena = 96ull << 20;  // a 64 MiB buffer fits
  s.channel.keepalive = std::chrono::milliseconds(100);
  s.channel.peer_timeout = std::chrono::milliseconds(600);
  s.runtime.threads = 2;
  s.logging.level = config::log_level::warn;
  return s;
}

void add_test_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<blob>("test::blob");
  cfg.add_message_type<to_whom>("test::to_whom");
  cfg.add_message_type<to_address>("test::to_address");
  cfg.add_message_type<to_calc>("test::to_calc");
}

std::unique_ptr<runtime> start_node(const config::settings& s) {
  return std::make_unique<runtime>(s, add_test_types);
}

// `total` bytes gathered from random pieces (1 byte and up, at random
// offsets) of a pool buffer, of user memory and of heap copies, filled
// with the bytes of `reference` at their places.
buffer scattered(runtime& rt, const buffer& reference, std::mt19937& rng,
                 std::vector<std::vector<unsigned char>>& user_memory) {
  std::vector<buffer> pieces;
  std::size_t at = 0, pool_at = 0;
  // Pool pieces never overlap: each skips at most its own size.
  auto pool = rt.allocate(2 * reference.size());
  while (at < reference.size()) {
    std::size_t left = reference.size() - at;
    std::size_t n = std::uniform_int_distribution<std::size_t>(
        1, std::max<std::size_t>(1, reference.size() / 7))(rng);
    n = std::min(n, left);
    buffer piece;
    switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
      case 0: {  // a slice of the pool buffer at an odd place
        pool_at += std::uniform_int_distribution<std::size_t>(0, std::min<std::size_t>(7, n))(rng);
        piece = pool.slice(pool_at, n);
        pool_at += n;
        break;
      }
      case 1: {
        user_memory.emplace_back(n);
        piece = buffer::wrap(user_memory.back().data(), n, nullptr);
        break;
      }
      default:
        piece = buffer::heap(n);
    }
    std::memcpy(piece.data(), reference.data() + at, n);
    pieces.push_back(piece);
    at += n;
  }
  return buffer::gather(std::move(pieces));
}

}  // namespace riomesh::test
