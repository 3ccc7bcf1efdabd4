#include <riomesh/actors/scheduler/deadline_clock.hpp>

#include <vector>

namespace riomesh::actors {

using base = caf::detail::simple_actor_clock;

template <class Insert>
void deadline_clock::add(time_point t, Insert insert) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (done_)
    return;
  insert();
  if (t >= armed_)
    return;
  armed_ = t;
  ++wakes_;
  cv_.notify_one();
}

void deadline_clock::set_ordinary_timeout(time_point t, caf::abstract_actor* self,
                                          caf::atom_value type, std::uint64_t id) {
  add(t, [&] { base::set_ordinary_timeout(t, self, type, id); });
}

void deadline_clock::set_multi_timeout(time_point t, caf::abstract_actor* self,
                                       caf::atom_value type, std::uint64_t id) {
  add(t, [&] { base::set_multi_timeout(t, self, type, id); });
}

void deadline_clock::set_request_timeout(time_point t, caf::abstract_actor* self,
                                         caf::message_id id) {
  add(t, [&] { base::set_request_timeout(t, self, id); });
}

// A cancellation never wakes the thread: if the cancelled event was the
// one it sleeps towards, the thread wakes at that deadline, finds nothing
// due and sleeps again.
void deadline_clock::cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) {
  std::lock_guard<std::mutex> guard{mtx_};
  base::cancel_ordinary_timeout(self, type);
}

void deadline_clock::cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) {
  std::lock_guard<std::mutex> guard{mtx_};
  base::cancel_request_timeout(self, id);
}

void deadline_clock::cancel_timeouts(caf::abstract_actor* self) {
  std::lock_guard<std::mutex> guard{mtx_};
  base::cancel_timeouts(self);
}

void deadline_clock::schedule_message(time_point t, caf::strong_actor_ptr receiver,
                                      caf::mailbox_element_ptr content) {
  add(t, [&] { base::schedule_message(t, std::move(receiver), std::move(content)); });
}

void deadline_clock::schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                                      caf::message content) {
  add(t,
      [&] { base::schedule_message(t, std::move(target), std::move(sender), std::move(content)); });
}

void deadline_clock::cancel_all() {
  drop_all();
}

// The events go out of scope after the lock is released: an event holds a
// reference to its actor, and the last one may end the actor, whose
// clean-up cancels its timeouts here.
void deadline_clock::drop_all() {
  schedule_map dropped;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    dropped.swap(schedule_);
    actor_lookup_.clear();
  }
}

void deadline_clock::run() {
  std::vector<unique_delayed_event_ptr> due;
  std::unique_lock<std::mutex> lock{mtx_};
  while (!done_) {
    if (schedule_.empty()) {
      armed_ = time_point::max();
      cv_.wait(lock);
      continue;
    }
    auto t = now();
    auto next = schedule_.begin()->first;
    if (next > t) {
      armed_ = next;
      cv_.wait_until(lock, next);
      continue;
    }
    for (auto i = schedule_.begin(); i != schedule_.end() && i->first <= t;) {
      if (i->second->backlink != actor_lookup_.end())
        actor_lookup_.erase(i->second->backlink);
      due.push_back(std::move(i->second));
      i = schedule_.erase(i);
    }
    // Shipping enqueues into mailboxes (a riomesh proxy's enqueue sends on
    // the network), and an event's destructor may release the last
    // reference to an actor, whose clean-up comes back here: neither
    // happens under the lock.
    lock.unlock();
    for (auto& e : due)
      ship(*e);
    due.clear();
    lock.lock();
  }
  lock.unlock();
  drop_all();
}

void deadline_clock::stop() {
  std::lock_guard<std::mutex> guard{mtx_};
  done_ = true;
  cv_.notify_all();
}

std::uint64_t deadline_clock::wakes() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return wakes_;
}

std::size_t deadline_clock::pending() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return schedule_.size();
}

}  // namespace riomesh::actors
