#include <riomesh/actors/progress/progress_loop.hpp>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace riomesh::actors {
namespace {

epoll_event event_for(int fd, bool write) {
  epoll_event ev{};
  // Readable always: an owner waiting to write must still see what the
  // peer sends, or two peers with full buffers would wait on each other.
  ev.events = EPOLLIN | EPOLLONESHOT | (write ? std::uint32_t{EPOLLOUT} : 0u);
  ev.data.fd = fd;
  return ev;
}

}  // namespace

progress_loop::progress_loop() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0)
    throw std::system_error(errno, std::generic_category(), "progress loop: epoll or eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = stop_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev);
  thread_ = std::thread([this] { run(); });
}

progress_loop::~progress_loop() {
  std::uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) {
    // Cannot happen with a fresh eventfd; the join below would then hang,
    // so there is nothing better to do than to try anyway.
  }
  thread_.join();
  ::close(stop_fd_);
  ::close(epoll_fd_);
}

bool progress_loop::watch(int fd, std::function<void()> ready, bool write) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    callbacks_[fd] = std::move(ready);
  }
  auto ev = event_for(fd, write);
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0)
    return true;
  std::lock_guard<std::mutex> guard(lock_);
  callbacks_.erase(fd);
  return false;
}

bool progress_loop::rearm(int fd, bool write) {
  auto ev = event_for(fd, write);
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void progress_loop::unwatch(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  // A callback for it may be running right now: wait for it to finish.
  std::lock_guard<std::mutex> dispatching(dispatch_);
  std::lock_guard<std::mutex> guard(lock_);
  callbacks_.erase(fd);
}

std::size_t progress_loop::watched() const {
  std::lock_guard<std::mutex> guard(lock_);
  return callbacks_.size();
}

void progress_loop::run() {
  epoll_event ready[64];
  for (;;) {
    int n = epoll_wait(epoll_fd_, ready, 64, -1);
    if (n < 0 && errno == EINTR)
      continue;
    for (int i = 0; i < n; ++i) {
      if (ready[i].data.fd == stop_fd_)
        return;
      std::lock_guard<std::mutex> dispatching(dispatch_);
      std::function<void()> callback;
      {
        std::lock_guard<std::mutex> guard(lock_);
        auto it = callbacks_.find(ready[i].data.fd);
        if (it == callbacks_.end())
          continue;
        callback = it->second;
      }
      callback();
    }
  }
}

}  // namespace riomesh::actors
