// The I/O thread as a CAF execution unit, the way CAF 0.17 runs a broker on
// its multiplexer: when a message the thread delivers wakes an idle actor,
// the thread runs the actor's handler itself, after the round that brought
// the message, instead of waking a scheduler worker for it. A round trip
// then costs no thread wake-up on either side: the reply the handler sends
// is on its link's outbox before the thread looks at the links again.
//
// Bounded so that I/O keeps its thread: an actor gets `throughput`
// messages per turn, and one still busy after that goes to the CAF
// workers; one whose turns took longer than `heavy` twice in a row (a
// handler that computes, or blocks) goes to the workers for a while. What
// waits here when the thread stops goes to the workers too.
//
// The while grows: `first_exile`, doubled each time the actor is sent
// away again soon after it came back, up to `heavy_for`. Turns are timed
// by the clock, so a thread the OS (or a hypervisor) took away looks like
// a long turn; an actor exiled for that comes back within milliseconds,
// where a second's exile would cost every message of that second a
// worker's wake-up (under emulation in the VM: 1 of each 100 turns looked
// long, and a 1 s exile handed nearly every turn of a round trip bench to
// the workers, tripling its round trip). A handler that computes is
// found out again at each return and is soon away for `heavy_for`.
#pragma once

#include <caf/execution_unit.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace riomesh::actors {

struct io_executor_limits {
  std::size_t throughput = 32;  // messages per actor per turn
  // After a turn whose sends took `large_output` bytes or more: messages
  // per turn until one sends less. What a turn sends leaves when it ends,
  // so a turn of 16 answers of 4 KiB held the first until the last was
  // made, and the two nodes took turns instead of working at once (4 KiB
  // requests, 16 open: 0.30x raw TCP at 32 a turn, 0.65x at 4). Small
  // messages keep the long turns: at 4 a turn, 8 B ones fell from 1.10x
  // raw TCP to 0.90x, from the cost of more turns and more sends.
  std::size_t throughput_after_large = 4;
  std::size_t large_output = 8 * 1024;
  std::chrono::nanoseconds heavy = std::chrono::microseconds(200);
  std::chrono::nanoseconds first_exile = std::chrono::milliseconds(10);
  std::chrono::nanoseconds heavy_for = std::chrono::seconds(1);  // the longest exile
};

class io_executor final : public caf::execution_unit {
 public:
  using clock = std::chrono::steady_clock;
  using limits = io_executor_limits;

  // `thread` runs the actors: exec_later() and run() are for it only.
  io_executor(caf::actor_system& sys, std::thread::id thread, limits l);
  ~io_executor() override;

  bool here() const { return std::this_thread::get_id() == thread_; }

  // An actor woken by a delivery made on this thread (CAF calls it).
  void exec_later(caf::resumable* job) override;
  // Runs what waits, once each. True if anything ran.
  bool run();
  // Hands what waits to the CAF workers (the thread is stopping).
  void hand_over();
  // Called after each turn, with its end: what the actor sent goes then.
  struct turn_output {
    bool sent = false;      // it did anything (it took time of its own)
    std::size_t bytes = 0;  // what the turn's messages carried
  };
  void after_turn(std::function<turn_output(clock::time_point)> f) { after_turn_ = std::move(f); }

  struct counters {
    std::uint64_t turns = 0;   // actor turns run on the I/O thread
    std::uint64_t handed = 0;  // woken actors given to the CAF workers instead
    std::uint64_t heavy = 0;   // turns that took longer than `heavy`
  };
  // Any thread.
  counters stats() const { return {turns_.load(), handed_.load(), heavy_turns_.load()}; }

 private:
  bool is_heavy(caf::resumable* job, clock::time_point now);
  // After a turn that took `took`: exiles the actor on its second long one.
  void judge(caf::resumable* job, clock::duration took, clock::time_point now);
  void to_workers(caf::resumable* job);

  limits limits_;
  std::function<turn_output(clock::time_point)> after_turn_;
  std::size_t throughput_ = limits_.throughput;  // the next turn's
  std::thread::id thread_;
  std::vector<caf::resumable*> waiting_, running_;
  // By actor id: turns in a row found too long, and until when it is
  // exiled to the workers once that happened twice (one long turn, such
  // as an actor's first, is forgiven); how long its last exile was, kept
  // while it is back for less than `heavy_for`, to double the next. (Not
  // by address: an actor spawned where a dead one lived would inherit its
  // strikes and exiles.)
  struct record {
    int strikes = 0;
    clock::time_point until{};
    clock::duration exile{};
  };
  std::unordered_map<std::uint64_t, record> heavy_;
  std::atomic<std::uint64_t> turns_{0}, handed_{0}, heavy_turns_{0};
};

}  // namespace riomesh::actors
