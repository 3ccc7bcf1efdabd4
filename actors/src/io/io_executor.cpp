#include <riomesh/actors/io/io_executor.hpp>
#include <riomesh/actors/io/turn_ended.hpp>

#include <caf/actor_system.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <algorithm>

namespace riomesh::actors {
namespace {

// An actor's id without a dynamic_cast (about 1,200 instructions, paid per
// turn while any actor was under watch): CAF's actors say what they are.
std::uint64_t id_of(caf::resumable* job) {
  if (job->subtype() != caf::resumable::scheduled_actor)
    return 0;
  return static_cast<caf::scheduled_actor*>(job)->id();
}

// Bounds the table of heavy actors: expired exiles go first, and if the
// rest still fill it, it starts over (its actors are found out again).
constexpr std::size_t max_heavy = 4096;

}  // namespace

io_executor::io_executor(caf::actor_system& sys, std::thread::id thread, limits l)
    : caf::execution_unit(&sys), limits_(l), thread_(thread) {}

io_executor::~io_executor() {
  hand_over();
}

void io_executor::to_workers(caf::resumable* job) {
  ++handed_;
  system().scheduler().enqueue(job);  // the reference goes with it
}

bool io_executor::is_heavy(caf::resumable* job, clock::time_point now) {
  if (heavy_.empty())
    return false;
  auto it = heavy_.find(id_of(job));
  return it != heavy_.end() && it->second.until > now;
}

void io_executor::judge(caf::resumable* job, clock::duration took, clock::time_point now) {
  if (took <= limits_.heavy && heavy_.empty())
    return;
  auto id = id_of(job);
  if (took <= limits_.heavy) {
    auto it = heavy_.find(id);
    if (it == heavy_.end())
      return;
    it->second.strikes = 0;
    if (it->second.exile == clock::duration::zero() || now - it->second.until > limits_.heavy_for)
      heavy_.erase(it);
    return;
  }
  ++heavy_turns_;
  if (heavy_.size() >= max_heavy) {
    for (auto it = heavy_.begin(); it != heavy_.end();)
      it = it->second.until <= now && it->second.strikes == 0 ? heavy_.erase(it) : std::next(it);
    if (heavy_.size() >= max_heavy)
      heavy_.clear();
  }
  auto& r = heavy_[id];
  if (++r.strikes >= 2) {
    r.strikes = 0;
    bool again = r.exile != clock::duration::zero() && now - r.until <= limits_.heavy_for;
    auto first = std::chrono::duration_cast<clock::duration>(limits_.first_exile);
    auto most = std::chrono::duration_cast<clock::duration>(limits_.heavy_for);
    r.exile = again ? std::min(most, r.exile * 2) : std::min(most, first);
    r.until = now + r.exile;
  }
}

void io_executor::exec_later(caf::resumable* job) {
  if (!heavy_.empty() && is_heavy(job, clock::now()))
    return to_workers(job);
  waiting_.push_back(job);
}

bool io_executor::run() {
  if (waiting_.empty())
    return false;
  running_.swap(waiting_);
  auto start = clock::now();
  for (auto* job : running_) {
    auto res = job->resume(this, throughput_);
    auto end = clock::now();
    ++turns_;
    judge(job, end - start, end);
    auto out = after_turn_ ? after_turn_(end) : turn_output{};
    throughput_ =
        out.bytes >= limits_.large_output ? limits_.throughput_after_large : limits_.throughput;
    // The next turn starts here, unless sending what this one sent took time.
    start = out.sent ? clock::now() : end;
    // Still busy: another turn after the links had theirs.
    if (wants_another_turn(job, res))
      waiting_.push_back(job);
  }
  running_.clear();
  return true;
}

void io_executor::hand_over() {
  for (auto* job : waiting_)
    to_workers(job);
  waiting_.clear();
}

}  // namespace riomesh::actors
