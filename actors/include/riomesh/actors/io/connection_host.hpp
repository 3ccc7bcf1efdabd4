// The I/O thread as the execution unit of its connections' actors, the way
// CAF 0.17 runs a broker on its multiplexer: each touches its channel, so
// it runs there and nowhere else. A message for one, from any thread,
// wakes it on the I/O thread, after the round in which the message came;
// unlike the actors io_executor runs, none is ever handed to the CAF
// workers, however long its turns.
#pragma once

#include <caf/execution_unit.hpp>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

namespace riomesh::actors {

class io_loop;

class connection_host final : public caf::execution_unit {
 public:
  // Runs on `loop`'s thread from now on; `loop` must stop before this goes.
  connection_host(caf::actor_system& sys, io_loop& loop, std::size_t throughput = 64);
  ~connection_host() override;
  connection_host(const connection_host&) = delete;
  connection_host& operator=(const connection_host&) = delete;

  // CAF calls it when a message wakes one of the actors (any thread).
  void exec_later(caf::resumable* job) override;

 private:
  bool run();           // the I/O thread, after each round
  void take_arrived();  // the I/O thread
  void release_all();

  io_loop& loop_;
  std::size_t throughput_;
  std::vector<caf::resumable*> ready_, running_;  // the I/O thread's
  std::mutex lock_;
  std::vector<caf::resumable*> arrived_;      // woken from other threads
  std::atomic<bool> arrived_waiting_{false};  // set under lock_: a look without it
  bool stopped_ = false;                      // under lock_: the thread is gone
};

}  // namespace riomesh::actors
