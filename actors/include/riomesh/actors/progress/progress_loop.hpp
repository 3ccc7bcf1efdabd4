// The progress thread: waits on the fds of many channels with one epoll
// and says which one has something, never touching a channel itself (a
// channel belongs to its connection actor, which alone may call it). Each
// fd is one-shot: after its callback the fd stays quiet until its owner,
// done with what woke it, calls rearm(). So a busy channel costs one
// wake-up per batch of work, not one per byte. The callback runs on the
// progress thread: it should only hand off (CAF: anon_send), which is safe
// from any thread.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace riomesh::actors {

class progress_loop {
 public:
  progress_loop();   // starts the thread; throws std::system_error without epoll
  ~progress_loop();  // stops and joins it
  progress_loop(const progress_loop&) = delete;
  progress_loop& operator=(const progress_loop&) = delete;

  // Calls `ready` (on the progress thread) the next time `fd` is readable,
  // or also writable if `write` is set. False if the fd cannot be watched.
  bool watch(int fd, std::function<void()> ready, bool write = false);
  // Watches `fd` once more; call after handling what woke it.
  bool rearm(int fd, bool write = false);
  // Stops watching; `ready` is not called after this returns. Not from
  // inside a callback (it waits for the running one to finish).
  void unwatch(int fd);

  std::size_t watched() const;

 private:
  void run();

  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd that ends the thread
  mutable std::mutex lock_;
  // Held while a callback runs, so unwatch() can wait it out.
  std::mutex dispatch_;
  std::map<int, std::function<void()>> callbacks_;
  std::thread thread_;
};

}  // namespace riomesh::actors
