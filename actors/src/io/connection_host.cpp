#include <riomesh/actors/io/connection_host.hpp>
#include <riomesh/actors/io/io_loop.hpp>
#include <riomesh/actors/io/turn_ended.hpp>

#include <caf/resumable.hpp>

namespace riomesh::actors {

connection_host::connection_host(caf::actor_system& sys, io_loop& loop, std::size_t throughput)
    : caf::execution_unit(&sys), loop_(loop), throughput_(throughput) {
  loop_.after_each_round([this] { return run(); });
  loop_.at_stop([this] { release_all(); });
}

connection_host::~connection_host() {
  release_all();
}

void connection_host::exec_later(caf::resumable* job) {
  if (loop_.on_io_thread()) {
    ready_.push_back(job);
    return;
  }
  bool first = false;
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (!stopped_) {
      first = arrived_.empty();
      arrived_.push_back(job);
      if (first)
        arrived_waiting_.store(true, std::memory_order_release);
      job = nullptr;
    }
  }
  if (job) {  // nothing will run it: its messages go with it
    intrusive_ptr_release(job);
    return;
  }
  // One nudge per batch: the thread takes all that arrived meanwhile.
  if (first)
    loop_.nudge();
}

void connection_host::take_arrived() {
  if (!arrived_waiting_.load(std::memory_order_acquire))
    return;
  std::lock_guard<std::mutex> guard(lock_);
  arrived_waiting_.store(false, std::memory_order_relaxed);
  ready_.insert(ready_.end(), arrived_.begin(), arrived_.end());
  arrived_.clear();
}

bool connection_host::run() {
  take_arrived();
  if (ready_.empty())
    return false;
  running_.swap(ready_);
  for (auto* job : running_)
    if (wants_another_turn(job, job->resume(this, throughput_)))
      ready_.push_back(job);  // after the links had theirs
  running_.clear();
  return true;
}

void connection_host::release_all() {
  std::vector<caf::resumable*> jobs;
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopped_ = true;
    jobs.swap(arrived_);
  }
  jobs.insert(jobs.end(), ready_.begin(), ready_.end());
  ready_.clear();
  for (auto* job : jobs)
    intrusive_ptr_release(job);
}

}  // namespace riomesh::actors
