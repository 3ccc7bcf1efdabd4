// The exchange's part in remote memory grants: the runtime's calls handed
// to the two sides (grants/grant_owner.hpp, grants/grant_holder.hpp), and
// what those need of it (grant_port.hpp) that is the exchange's own: a
// `then` encoded to ride on a use.
#include "exchange_impl.hpp"

#include <riomesh/message_codec.hpp>

namespace riomesh::actors {

std::optional<grant> exchange::lend(link& l, buffer region, std::uint8_t rights, bool once,
                                    std::string& error) {
  return impl_->lent.lend(l, std::move(region), rights, once, error);
}

std::optional<granted> exchange::take_back(std::uint64_t id) {
  return impl_->lent.take_back(id);
}

std::uint64_t exchange::next_grant_op() {
  return impl_->holding.next_op();
}

void exchange::write_granted(const grant& g, std::uint64_t op, std::uint64_t offset, buffer data,
                             const caf::strong_actor_ptr& status_to,
                             const caf::strong_actor_ptr& then_to, const caf::message& then) {
  impl_->holding.write(g, op, offset, std::move(data), status_to, then_to, then);
}

void exchange::read_granted(link& l, const grant& g, std::uint64_t op, std::uint64_t offset,
                            buffer into, const caf::strong_actor_ptr& status_to,
                            const caf::strong_actor_ptr& then_to, const caf::message& then) {
  impl_->holding.read(l, g, op, offset, std::move(into), status_to, then_to, then);
}

void exchange::atomic_granted(const grant& g, std::uint64_t op, grant_op kind, std::uint64_t offset,
                              std::uint64_t a, std::uint64_t b,
                              const caf::strong_actor_ptr& status_to,
                              const caf::strong_actor_ptr& then_to, const caf::message& then) {
  impl_->holding.atomic(g, op, kind, offset, a, b, status_to, then_to, then);
}

void exchange::grant_failed(std::uint64_t op, const caf::strong_actor_ptr& status_to,
                            grant_status st, const std::string& detail, bool atomic) {
  impl_->holding.failed(op, status_to, st, detail, atomic);
}

// A `then` rides when it is for an actor of the owner's node and fits in
// one envelope without placed buffers; its sender, if ours, is exported
// to the owner for the reply.
void exchange::impl::carry_then(link& l, grant_request& r, outbound_message& m, grant_wait& w) {
  if (!w.then_to || w.then_to->node() != node_id_of(l.peer_name()))
    return;
  encoded_message enc;
  std::string error;
  if (!encode_message(sys, w.then, params.eager_threshold, enc, error, &codec) ||
      !enc.placed.empty())
    return;  // sent the ordinary way, which reports what fails
  auto size =
      (r.op == grant_op::compare_swap ? grant_swap_size : grant_request_size) + 8 + enc.body.size();
  if (size > l.peer_terms().max_body)
    return;
  if (w.status_to && w.status_to->node() == sys.node()) {
    m.env.sender = w.status_to->id();
    export_to(w.status_to, l.peer_name(), access::reach);
  }
  count.payload_copied_out += enc.copied;
  r.then_to = w.then_to->id();
  r.then_body = std::move(enc.body);
  w.then_to = nullptr;
  w.then = caf::message{};
}

}  // namespace riomesh::actors
