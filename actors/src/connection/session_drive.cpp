#include <riomesh/actors/connection/session_drive.hpp>

#include <openssl/ssl.h>

namespace riomesh::actors {

namespace {

bool flush(channels::channel& ch, session_setup& s) {
  bool moved = false;
  for (auto out = s.output(); out.second > 0; out = s.output()) {
    auto r = ch.send(out.first, out.second);
    if (r.bytes > 0) {
      s.sent(r.bytes);
      moved = true;
      continue;
    }
    if (r.st != channels::status::would_block)
      s.send_failed(engine::to_string(r.st));
    break;
  }
  return moved;
}

// Reads until the setup stops taking bytes or none are left. With none
// readable, one byte is asked for: a peer that ended its side (as one
// that refuses us does) is seen, and a byte that arrives meanwhile is
// read, not lost.
bool read(channels::channel& ch, session_setup& s) {
  bool moved = false;
  while (s.reading()) {
    auto [p, n] = ch.peek();
    unsigned char probe = 0;
    bool probed = n == 0;
    if (probed) {
      auto r = ch.recv(&probe, 1);
      if (r.bytes != 1) {
        if (r.st == channels::status::eof || r.st == channels::status::closed)
          s.on_end(ch.reason());
        break;
      }
      p = &probe;
      n = 1;
    }
    std::size_t used = s.on_bytes(p, n);
    if (!probed)
      ch.consume(used);
    moved = moved || used > 0;
    if (used == 0)
      break;
  }
  return moved;
}

// What a failure asks: the alert or refusal, if the channel takes it,
// then the shutdown.
bool shut_if_due(channels::channel& ch, session_setup& s) {
  if (!s.take_shutdown())
    return false;
  flush(ch, s);
  ch.shutdown(channels::shutdown_how::both);
  return true;
}

}  // namespace

session_setup::options over(channels::channel& ch, session_setup::options o) {
  o.peer = ch.peer();
  o.can_encrypt = ch.guard() != nullptr;
  return o;
}

bool drive_session(channels::channel& ch, session_setup& s) {
  // A failure told to the setup outside this call still shuts down here.
  if (s.failed() || s.established())
    return shut_if_due(ch, s);
  bool moved = read(ch, s);
  moved = flush(ch, s) || moved;
  if (auto* tls = s.take_stream_tls()) {
    // Ours until the guard takes it.
    std::string error;
    auto* guard = ch.guard();
    bool ok = guard && guard->secure(tls, error);
    if (!ok)
      SSL_free(tls);
    s.secured(ok, error);
  }
  if (!s.failed() && !s.established() && ch.closed())
    s.on_end(ch.reason());
  if (s.awaiting_peer() && ch.peek().second == 0)
    if (auto* guard = ch.guard())
      s.on_early_frame(guard->held_frame());
  if (s.take_authorize())
    if (auto* guard = ch.guard())
      guard->authorize();
  return shut_if_due(ch, s) || moved;
}

}  // namespace riomesh::actors
