// Grants used one-sided: where the connection reads one-sided (rdma with
// read resources both ways), the holder reads a grant's bytes with RDMA
// READs and runs its atomics as verbs atomics, through the map the grant
// gave it, and the owner's CPU takes no part in moving the data.
//
// Behind the fetch, fenced on the same queue pair, goes a notice to the
// owner when it has something to do: a `then` that rides on it (the owner
// delivers it once the fetch is over, as RDS sends its message behind an
// RDMA READ), or a use-once grant to use up. Its answer is the status.
// Without a notice the status comes as the fetch completes, and the owner
// hears nothing, as the grant API promises of a use without `then`.
#include <riomesh/actors/grants/grant_holder.hpp>

#include <riomesh/actors/connection/connection_core.hpp>

namespace riomesh::actors {

void grant_holder::fetch(link& l, const grant& g, std::uint64_t op, grant_request r, direct_fetch f,
                         grant_wait w) {
  auto atomic = w.atomic;
  auto status_to = w.status_to;
  w.one_sided = true;
  outbound_message m;
  port_.carry_then(l, r, m, w);
  bool notice = r.then_to != 0 || g.once;
  if (!uses_.add(op, std::move(w)))
    return failed(op, status_to, grant_status::dropped, too_many(g.owner), atomic);
  ++count_.fetched;
  auto link_id = l.id();
  auto alive = port_.lifetime();
  f.done = [alive, self = this, op, link_id, notice](std::uint64_t value) {
    auto port = alive.lock();  // and with it this side
    if (!port)
      return;
    if (notice)
      return self->uses_.note_fetched(op, value);  // the owner's answer ends it
    if (auto w = self->uses_.take(op, link_id))
      self->done(op, std::move(*w), grant_status::ok, {}, value);
  };
  m.fetch = std::move(f);
  m.on_failure = use_failure(op, link_id, g.owner, {});
  if (notice) {
    r.done = true;
    return send_use(l, g.id, op, r, std::move(m));
  }
  m.has_envelope = false;
  submit_use(l, op, std::move(m));
}

}  // namespace riomesh::actors
