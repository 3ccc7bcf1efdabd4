// Senders for the load test, several nodes in one process:
//   load_sender SINK_PORT FIRST COUNT MESSAGES SEED
// Runs nodes load-FIRST .. load-(FIRST+COUNT-1), each dialing node-a at
// SINK_PORT and sending MESSAGES blobs of mixed sizes to its "sink", in
// batches closed by a request the sink answers. Each blob's seq is
// (node index << 40) | n, its payload filled from that seq. Prints
// "ready PORT" (its first node's) once every node has found the sink, then
// per node, once the sink has answered after its last blob (so all are in):
//   done INDEX sent N undelivered U stalls S
// and waits for stdin to close.
#include <cluster.hpp>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <atomic>
#include <functional>
#include <future>
#include <iostream>
#include <random>

using namespace riomesh;
using namespace riomesh::test;

namespace {

struct load_plan {
  std::uint64_t index = 0, messages = 0, seed = 0;
  std::string sink_node;
};

// 70% small (inline), 25% around the eager threshold, 5% large enough that
// a few fill the receiver's arena.
std::size_t pick_size(std::mt19937_64& rng) {
  auto r = rng() % 100;
  if (r < 70)
    return 64 + rng() % 4032;
  if (r < 95)
    return (16 << 10) + rng() % (48 << 10);
  return (128 << 10) + rng() % (896 << 10);
}

caf::behavior send_load(caf::event_based_actor* self, caf::actor sink, runtime* rt, load_plan plan,
                        std::shared_ptr<std::promise<std::string>> done) {
  struct state {
    std::uint64_t sent = 0, undelivered = 0;
    std::mt19937_64 rng;
  };
  auto st = std::make_shared<state>();
  st->rng.seed(plan.seed);
  // Batches of 128, each closed by a request the sink answers after every
  // blob before it; at most two batches unanswered. The connection's queue
  // (1024) is never full, so nothing should be refused; the receiver's small
  // arena still runs out, and blobs wait in the queue for its credit.
  auto outstanding = std::make_shared<int>(0);
  std::shared_ptr<std::function<void()>> batch = std::make_shared<std::function<void()>>();
  *batch = [=] {
    while (*outstanding < 2 && st->sent < plan.messages) {
      for (int i = 0; i < 128 && st->sent < plan.messages; ++i) {
        auto seq = (plan.index << 40) | st->sent++;
        auto data = rt->allocate(pick_size(st->rng));
        fill(data, seq);
        self->send(sink, blob{seq, data});
      }
      ++*outstanding;
      auto probe = rt->allocate(8);
      self->request(sink, std::chrono::minutes(10), sum_atom::value, probe)
          .then(
              [=](std::uint64_t) {
                --*outstanding;
                if (st->sent < plan.messages)
                  return (*batch)();
                if (*outstanding > 0)
                  return;
                done->set_value("done " + std::to_string(plan.index) + " sent " +
                                std::to_string(st->sent) + " undelivered " +
                                std::to_string(st->undelivered));
                *batch = nullptr;  // it holds itself
                self->quit();
              },
              [=](caf::error& e) {
                done->set_value("failed " + std::to_string(plan.index) + ": " +
                                self->system().render(e));
                *batch = nullptr;
                self->quit();
              });
    }
  };
  self->send(self, caf::tick_atom::value);
  return {
      [=](caf::tick_atom) { (*batch)(); },
      [=](undelivered_atom, const std::string&, const caf::error&) { ++st->undelivered; },
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: load_sender SINK_PORT FIRST COUNT MESSAGES SEED\n";
    return 2;
  }
  auto port = static_cast<std::uint16_t>(std::stoi(argv[1]));
  std::uint64_t first = std::stoull(argv[2]), count = std::stoull(argv[3]),
                messages = std::stoull(argv[4]), seed = std::stoull(argv[5]);
  try {
    std::vector<std::unique_ptr<runtime>> nodes;
    std::vector<caf::actor> sinks;
    for (auto i = first; i < first + count; ++i) {
      auto s = node_settings("load-" + std::to_string(i), {{"node-a", port}});
      s.runtime.threads = 1;
      // The tests' 600 ms would call a receiver busy with 64 senders on two
      // cores dead; the default is 5 s.
      s.channel.peer_timeout = std::chrono::seconds(5);
      s.channel.keepalive = std::chrono::milliseconds(500);
      nodes.push_back(start_node(s));
    }
    for (auto& rt : nodes) {
      auto sink = rt->remote_actor("node-a", "sink", std::chrono::seconds(60));
      if (!sink)
        throw std::runtime_error(rt->node_name() +
                                 ": no sink: " + rt->system().render(sink.error()));
      sinks.push_back(*sink);
    }
    std::cout << "ready " << nodes.front()->port() << std::endl;
    std::vector<std::future<std::string>> results;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      auto done = std::make_shared<std::promise<std::string>>();
      results.push_back(done->get_future());
      load_plan plan{first + k, messages, seed * 1000003 + first + k, "node-a"};
      nodes[k]->system().spawn(send_load, sinks[k], nodes[k].get(), plan, done);
    }
    // stats() blocks on the node's actors: from here, not from an actor.
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      auto line = results[k].get();
      std::uint64_t stalls = 0;
      for (auto& [peer, c] : nodes[k]->stats().peers)
        stalls += c.credit_stalls;
      std::cout << line << " stalls " << stalls << std::endl;
    }
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    for (auto& rt : nodes)
      rt->stop();
  } catch (const std::exception& e) {
    std::cerr << "load_sender: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
