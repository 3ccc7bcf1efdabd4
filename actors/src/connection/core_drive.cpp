#include <riomesh/actors/connection/core_drive.hpp>

#include <vector>

namespace riomesh::actors {

namespace {

// Sends what the core has to say; true once all of it went.
bool flush(channels::channel& ch, connection_core& core) {
  for (auto out = core.output(); out.second > 0; out = core.output()) {
    auto r = ch.send(out.first, out.second);
    core.sent(r.bytes);
    if (r.st == channels::status::would_block || r.bytes == 0) {
      if (r.st != channels::status::ok && r.st != channels::status::would_block)
        core.send_failed(r.st);
      return false;
    }
  }
  return !core.closed();
}

bool read(channels::channel& ch, connection_core& core) {
  bool moved = false;
  for (;;) {
    auto [p, n] = ch.peek();
    if (n == 0) {
      // The peer shut its side down and all it sent is read: the session
      // is over. Left open, the socket's end of stream would wake the
      // progress loop again and again.
      if (ch.recv(nullptr, 0).st == channels::status::eof) {
        core.on_end();
        return true;
      }
      return moved;
    }
    ch.consume(core.on_bytes(p, n));
    moved = true;
    if (core.closed())
      return true;
  }
}

}  // namespace

bool drive_core(channels::channel& ch, connection_core& core,
                connection_core::clock::time_point now) {
  // One I/O thread drives every core it has: one scratch list for all.
  thread_local std::vector<channels::event> events;
  events.clear();
  ch.take_events(events);
  for (const auto& e : events)
    core.on_event(e);
  bool moved = !events.empty();
  if (core.awaits_reason())
    core.on_closed(ch.reason());  // lost before the core began: nothing is read
  if (!core.closed()) {
    // Even on a closed channel: what the peer sent before it closed is
    // still to be read, and a stream that ended in order says it stopped.
    moved = read(ch, core) || moved;
    if (ch.closed())
      core.on_closed(ch.reason());
  }
  if (!core.closed()) {
    moved = core.pump(now) || moved;
    while (flush(ch, core) && core.send_next_message())
      moved = true;
  }
  if (core.take_shutdown())
    ch.shutdown(channels::shutdown_how::both);
  return moved;
}

}  // namespace riomesh::actors
