// The clock behind every timeout and delayed message of a riomesh node: a
// request's timeout, `delayed_send`, an actor's `after` handler.
//
// CAF 0.17's own clock hands every timer event to its thread through a
// ring buffer and wakes that thread for each one: a futex wake and a
// context switch per request with a timeout, paid by the thread that sends
// it. On the host's 8 B window that halved riomesh's rate
// (docs/benchmarks.md, "The clock"). This clock keeps the schedule under a
// lock instead and wakes its thread only when an event falls due before
// the deadline the thread already sleeps towards: a stream of requests
// with the same timeout adds later deadlines only. Cancellations never
// wake it.
//
// It derives from CAF's thread-safe clock only because CAF's coordinator
// declares its clock by that type; nothing of that class's queue is used.
#pragma once

#include <caf/detail/thread_safe_actor_clock.hpp>

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace riomesh::actors {

class deadline_clock final : public caf::detail::thread_safe_actor_clock {
 public:
  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            std::uint64_t id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         std::uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) override;
  void cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) override;
  void cancel_timeouts(caf::abstract_actor* self) override;
  void schedule_message(time_point t, caf::strong_actor_ptr receiver,
                        caf::mailbox_element_ptr content) override;
  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                        caf::message content) override;
  void cancel_all() override;

  // The clock's thread: ships events as they fall due until stop().
  void run();
  // Ends run(); events still pending are dropped, as CAF's clock drops them.
  void stop();

  // How often a new event woke run() from its sleep: for the tests, which
  // show that a stream of requests does not.
  std::uint64_t wakes() const;
  // Events waiting to fall due.
  std::size_t pending() const;

 private:
  // Under the lock, unless stopped: `insert` puts an event due at `t` into
  // the schedule; the thread is woken if `t` comes before what it sleeps
  // towards.
  template <class Insert>
  void add(time_point t, Insert insert);
  // Empties the schedule; takes the lock.
  void drop_all();

  mutable std::mutex mtx_;
  std::condition_variable cv_;
  // What run() sleeps towards; max while the schedule is empty.
  time_point armed_ = time_point::max();
  bool done_ = false;
  std::uint64_t wakes_ = 0;
};

}  // namespace riomesh::actors
