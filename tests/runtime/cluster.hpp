// Runtimes in one test process, joined over tcp on loopback, or over rdma
// on the VM's soft-RoCE device when RIOMESH_CHANNEL=rdma (tools/vm-run.sh),
// and the message types the runtime tests send.
#pragma once

#include <riomesh/buffer_inspect.hpp>
#include <riomesh/runtime.hpp>

#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace riomesh::test {

// A buffer with a sequence number: what one-way streams carry.
struct blob {
  std::uint64_t seq = 0;
  buffer data;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, blob& x) {
  return f(caf::meta::type_name("test::blob"), x.seq, x.data);
}

// Actor handles inside messages (handles_test.cpp): a text for whoever
// the handle names, the handle as each kind CAF has.
struct to_whom {
  std::string text;
  caf::actor who;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, to_whom& x) {
  return f(caf::meta::type_name("test::to_whom"), x.text, x.who);
}
struct to_address {
  std::string text;
  caf::actor_addr who;
  caf::weak_actor_ptr weak;      // the same actor, weakly
  caf::strong_actor_ptr strong;  // and strongly
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, to_address& x) {
  return f(caf::meta::type_name("test::to_address"), x.text, x.who, x.weak, x.strong);
}

using sum_atom = caf::atom_constant<caf::atom("t_sum")>;
using echo_atom = caf::atom_constant<caf::atom("t_echo")>;
using count_atom = caf::atom_constant<caf::atom("t_count")>;
using add_atom = caf::atom_constant<caf::atom("t_add")>;

// A typed calculator: the typed request / response tests.
using calc_actor = caf::typed_actor<caf::replies_to<add_atom, int, int>::with<int>>;
struct to_calc {  // a typed handle inside a message
  calc_actor who;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, to_calc& x) {
  return f(caf::meta::type_name("test::to_calc"), x.who);
}
calc_actor::behavior_type calc(calc_actor::pointer self);

// Untyped: (sum_atom, buffer) -> checksum; (echo_atom, buffer) -> buffer;
// std::vector<char> -> the same, reversed;
// blob: counted, checked, in order per sender (gaps allowed, for sends
// refused as congested); (count_atom) -> (count, all intact and in order).
caf::behavior sink(caf::event_based_actor* self);
// The same, taking `per_blob` for each blob: a receiver that falls behind.
caf::behavior paced_sink(caf::event_based_actor* self, std::chrono::milliseconds per_blob);

// Takes (count_atom) requests and never answers them (it keeps the
// promises, so CAF sends no error either). The promises hold the actor: it
// must be told to exit.
caf::behavior black_hole(caf::event_based_actor* self);

// CAF 0.17 binds a null reference (UBSan reports it) when a function actor
// is spawned without arguments; these pass one.
caf::actor spawn_sink(caf::actor_system& sys);
// A sink's count, and whether all it got was intact and in order; throws
// std::runtime_error if it does not answer within 10 s.
std::uint64_t sink_count(caf::scoped_actor& self, const caf::actor& sink, bool& intact);
calc_actor spawn_calc(caf::actor_system& sys);
caf::actor spawn_black_hole(caf::actor_system& sys);
template <class Fn>
caf::actor spawn_fn(caf::actor_system& sys, Fn fn) {
  return sys.spawn([](caf::event_based_actor* self, Fn f) { return f(self); }, std::move(fn));
}

std::uint64_t checksum(const buffer& b);

// (sum_atom, data) answered by `to`: the checksum it computed (the test
// fails on an error).
std::uint64_t sum_at(runtime& rt, const caf::actor& to, const buffer& data);
// Sends (count_atom) to `to` from an actor of `rt`; the future gets the
// error it ended with, or none if it was answered.
std::future<caf::error> request_outcome(runtime& rt, const caf::actor& to);
// Sends `to` (a sink) a std::vector<char> of `size` bytes, serialized, not
// a buffer, and checks that it comes back whole and reversed.
void check_mirrored(runtime& rt, const caf::actor& to, std::size_t size);
void fill(buffer& b, std::uint64_t seed);
bool matches(const buffer& b, std::uint64_t seed);  // filled with that seed

std::string fabric_under_test();  // "tcp" or "rdma"

// Settings for a test node; peers are (name, port) of nodes started before.
config::settings node_settings(const std::string& name,
                               std::vector<std::pair<std::string, std::uint16_t>> peers = {},
                               const std::string& secret = "0123456789abcdef-test");
void add_test_types(caf::actor_system_config& cfg);
std::unique_ptr<runtime> start_node(const config::settings& s);

// Two nodes, a dialing b: the fixture of most runtime tests.
// Until `rt` routes messages to `peer` (up to 10 s): the dialer's side of
// a session is up half a round trip before the acceptor's.
inline bool wait_routed(runtime& rt, const std::string& peer) {
  for (int tries = 0; tries < 500; ++tries) {
    for (const auto& [name, counters] : rt.stats().peers)
      if (name == peer)
        return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Two nodes, node-a dialed node-b, and both sides are up.
struct two_nodes {
  std::unique_ptr<runtime> b, a;
  two_nodes() : two_nodes(config::channel_settings{}.rendezvous) {}
  explicit two_nodes(std::uint64_t rendezvous) {
    auto sb = node_settings("node-b");
    sb.channel.rendezvous = rendezvous;
    b = start_node(sb);
    auto sa = node_settings("node-a", {{"node-b", b->port()}});
    sa.channel.rendezvous = rendezvous;
    a = start_node(sa);
    if (!wait_routed(*a, "node-b") || !wait_routed(*b, "node-a"))
      throw std::runtime_error("two_nodes: node-a and node-b did not connect within 10 s");
  }
};

// The same, every buffer placed in the peer's arena (channel.rendezvous
// 0): the cases about the arena's path.
struct two_placing_nodes : two_nodes {
  two_placing_nodes() : two_nodes(0) {}
};

// `f()` (an expected), tried for up to 5 s: `rt`'s side of a connection
// the peer dialed may not be up yet when the peer's side is (on a loaded
// machine, for a while).
template <class F>
auto once_connected(F f) {
  auto out = f();
  for (int tries = 1; !out && tries < 250; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    out = f();
  }
  return out;
}
inline caf::expected<std::uint64_t> expose_once_connected(runtime& rt, const std::string& peer,
                                                          const buffer& b) {
  return once_connected([&] { return rt.expose(peer, b); });
}

// `reference`'s bytes in a buffer gathered from random pieces (1 byte and
// up, at random offsets) of a pool buffer, of user memory (kept in
// `user_memory`) and of heap copies.
buffer scattered(runtime& rt, const buffer& reference, std::mt19937& rng,
                 std::vector<std::vector<unsigned char>>& user_memory);

// The error of `x` rendered, or "" if it holds a value (doctest may
// stringify a message even when the check passes).
template <class T>
std::string error_text(runtime& rt, const caf::expected<T>& x) {
  return x ? std::string{} : rt.system().render(x.error());
}

}  // namespace riomesh::test

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<std::uint64_t>)
