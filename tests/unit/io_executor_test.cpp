// The I/O thread's executor on its own: how many messages each turn may
// take. After a turn whose messages carried `large_output` bytes or more,
// turns are short until one carries less, so that a large turn's first
// answers leave before its last are made.
#include <riomesh/actors/io/io_executor.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/resumable.hpp>

#include <doctest/doctest.h>

#include <thread>
#include <vector>

using riomesh::actors::io_executor;

namespace {

// A job that wants `turns` turns and notes the throughput each was given.
struct fake_job final : caf::resumable {
  int turns = 0;
  std::vector<std::size_t> given;
  resume_result resume(caf::execution_unit*, std::size_t max_throughput) override {
    given.push_back(max_throughput);
    return --turns > 0 ? resume_later : done;
  }
  void intrusive_ptr_add_ref_impl() override {}
  void intrusive_ptr_release_impl() override {}
};

}  // namespace

TEST_CASE("io executor: a turn that sent large messages makes the next ones short") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  riomesh::actors::io_executor_limits limits;
  limits.throughput = 32;
  limits.throughput_after_large = 4;
  limits.large_output = 8192;
  io_executor run{sys, std::this_thread::get_id(), limits};
  // What each turn's messages carried, in order.
  std::vector<std::size_t> output{100, 8192, 16384, 8191, 0};
  std::size_t turn = 0;
  run.after_turn([&](io_executor::clock::time_point) {
    return io_executor::turn_output{false, output.at(turn++)};
  });
  fake_job job;
  job.turns = 5;
  run.exec_later(&job);
  while (run.run()) {
  }
  CHECK(job.given == std::vector<std::size_t>{32, 32, 4, 4, 32});
}
