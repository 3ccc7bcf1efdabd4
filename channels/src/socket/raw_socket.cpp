#include <riomesh/channels/raw_socket.hpp>
#include <riomesh/channels/wait.hpp>

#include <cstring>

namespace riomesh::channels {

raw_socket::raw_socket(std::unique_ptr<channel> ch, std::chrono::nanoseconds polling_time)
    : ch_(std::move(ch)), polling_time_(polling_time) {}

raw_socket::~raw_socket() {
  if (auto* reg = ch_ ? ch_->registration() : nullptr)
    for (const auto& [base, id] : pins_)
      reg->unpin_memory(id);
}

std::unique_ptr<raw_socket> raw_socket::connect(const config::endpoint& to,
                                                const channel_options& opt, std::string& error) {
  auto ch = channels::connect(to, opt, error);
  return ch ? std::make_unique<raw_socket>(std::move(ch), opt.settings.polling_time) : nullptr;
}

std::unique_ptr<raw_socket> raw_socket::accept(listener& l, std::chrono::milliseconds timeout,
                                               const channel_options& opt, std::string& error) {
  auto ch = l.accept(timeout, error);
  return ch ? std::make_unique<raw_socket>(std::move(ch), opt.settings.polling_time) : nullptr;
}

bool raw_socket::take_events() {
  events_.clear();
  if (!ch_->take_events(events_))
    return false;
  for (const auto& e : events_) {
    if (e.kind == event_kind::writable) {
      writable_ = true;
    } else if (e.kind == event_kind::iowrite_done) {
      auto it = pending_.find(e.token);
      if (it != pending_.end() && --it->second == 0) {
        pending_.erase(it);
        copies_.erase(e.token);
      }
    }
  }
  return true;
}

unsigned raw_socket::ready(unsigned interest) {
  unsigned r = 0;
  if (ch_->closed())
    r |= poll_closed | (ch_->failed() ? poll_err : poll_hup);
  // Readable as a socket is: bytes wait, or a read would return at once
  // (end of stream after the peer's shutdown, or the connection's end).
  if ((interest & poll_in) &&
      (ch_->peek().second > 0 || ch_->recv(nullptr, 0).st != status::would_block))
    r |= poll_in;
  if ((interest & poll_out) && writable_ && !ch_->closed())
    r |= poll_out;
  return r;
}

bool raw_socket::wait(const std::function<bool()>& done) {
  // A connection that ends ends every wait: what the call waited for (a
  // completion, room, bytes) will not come, and the caller learns why.
  auto check = [&] {
    take_events();
    return done() || ch_->closed();
  };
  if (!blocking_)
    return retry_once(done);
  std::optional<wait_clock::time_point> deadline;
  if (timeout_)
    deadline = wait_clock::now() + *timeout_;
  return wait_until(*ch_, check, polling_time_, deadline);
}

bool raw_socket::retry_once(const std::function<bool()>& done) {
  ch_->busy_poll();
  take_events();
  if (done() || ch_->closed())
    return true;
  ch_->arm();
  take_events();
  return done() || ch_->closed();
}

io_result raw_socket::send(const void* data, std::size_t length) {
  auto* p = static_cast<const unsigned char*>(data);
  io_result total{0, status::ok};
  auto step = [&] {
    auto r = ch_->send(p + total.bytes, length - total.bytes);
    total.bytes += r.bytes;
    total.st = r.st;
    if (r.st == status::would_block)
      writable_ = false;
    return total.bytes == length || (r.st != status::ok && r.st != status::would_block);
  };
  if (!step())
    wait([&] { return writable_ && step(); });
  if (total.bytes == length)
    total.st = status::ok;
  return total;
}

io_result raw_socket::recv(void* out, std::size_t length) {
  io_result r;
  auto step = [&] {
    r = ch_->recv(out, length);
    return r.bytes > 0 || r.st != status::would_block;
  };
  if (length == 0 || step())
    return r;
  wait(step);
  return r;
}

map_result raw_socket::riomap(void* base, std::size_t length, std::optional<std::uint64_t> offset) {
  return ch_->map(base, length, offset);
}

status raw_socket::riounmap(std::uint64_t offset) {
  return ch_->unmap(offset);
}

bool raw_socket::register_memory(const void* base, std::size_t length) {
  auto* reg = ch_->registration();
  if (!reg)
    return true;
  if (pins_.count(base))
    return false;
  auto pin = reg->pin_memory(base, length, nullptr);
  if (!pin)
    return false;
  pins_[base] = pin->id;
  return true;
}

void raw_socket::deregister_memory(const void* base) {
  auto it = pins_.find(base);
  if (it == pins_.end())
    return;
  if (auto* reg = ch_->registration())
    reg->unpin_memory(it->second);
  pins_.erase(it);
}

io_result raw_socket::iowrite(const void* data, std::size_t length, std::uint64_t offset,
                              std::uint64_t token) {
  auto r = ch_->iowrite(data, length, offset, token);
  if (r.bytes > 0)
    ++pending_[token];
  if (r.st == status::would_block)
    writable_ = false;
  return r;
}

io_result raw_socket::riowrite(const void* data, std::size_t length, std::uint64_t offset) {
  auto* p = static_cast<const unsigned char*>(data);
  if (!blocking_) {
    // rsockets' riowrite leaves the caller's buffer free: stage a copy that
    // lives until the write completes.
    std::uint64_t token = next_token_++;
    std::vector<unsigned char> copy(p, p + length);
    auto r = iowrite(copy.data(), length, offset, token);
    if (r.bytes > 0)
      copies_.emplace(token, std::move(copy));
    if (r.bytes == 0 && r.st == status::would_block)
      wait([] { return false; });  // one progress step, so a retry can succeed
    return r;
  }
  std::uint64_t token = next_token_++;
  io_result total{0, status::ok};
  auto step = [&] {
    if (total.bytes < length) {
      auto r = iowrite(p + total.bytes, length - total.bytes, offset + total.bytes, token);
      total.bytes += r.bytes;
      total.st = r.st;
      if (r.st != status::ok && r.st != status::would_block)
        return true;
    }
    return total.bytes == length && done(token);
  };
  if (!step())
    wait(step);
  if (total.bytes == length && done(token))
    total.st = status::ok;
  else if (ch_->closed())
    total.st = status::closed;  // its writes may not have landed
  else if (total.st == status::ok)
    total.st = status::would_block;
  return total;
}

status raw_socket::shutdown(shutdown_how how) {
  return ch_->shutdown(how);
}

void raw_socket::close(std::chrono::milliseconds linger) {
  if (!ch_)
    return;
  ch_->shutdown(shutdown_how::both);
  bool was_blocking = blocking_;
  auto old_timeout = timeout_;
  blocking_ = true;
  timeout_ = linger;
  wait([&] { return ch_->closed() || (ch_->drained() && pending_.empty()); });
  blocking_ = was_blocking;
  timeout_ = old_timeout;
}

unsigned raw_socket::poll(unsigned interest, std::optional<std::chrono::milliseconds> timeout) {
  ch_->progress();
  take_events();
  unsigned r = ready(interest);
  if (r || (timeout && timeout->count() == 0))
    return r;
  std::optional<wait_clock::time_point> deadline;
  if (timeout)
    deadline = wait_clock::now() + *timeout;
  wait_until(
      *ch_,
      [&] {
        take_events();
        return (r = ready(interest)) != 0;
      },
      polling_time_, deadline);
  return r;
}

}  // namespace riomesh::channels
