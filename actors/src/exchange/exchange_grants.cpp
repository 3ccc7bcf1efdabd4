// The exchange's part in remote memory grants: the two sides
// (grants/grant_owner.hpp, grants/grant_holder.hpp) it holds, and what
// those need of it (grant_port.hpp) that is the exchange's own: a `then`
// encoded to ride on a use.
#include "exchange_impl.hpp"

#include <riomesh/message_codec.hpp>

namespace riomesh::actors {

grant_owner& exchange::lent_grants() {
  return impl_->lent;
}

grant_holder& exchange::held_grants() {
  return impl_->holding;
}

// A `then` rides when it is for an actor of the owner's node and fits in
// one envelope without placed buffers; its sender, if ours, is exported
// to the owner for the reply.
void exchange::impl::carry_then(link& l, grant_request& r, outbound_message& m, grant_wait& w) {
  if (!w.then_to || w.then_to->node() != handles.node_id_of(l.peer_name()))
    return;
  encoded_message enc;
  std::string error;
  if (!encode_message(sys, w.then, params.eager_threshold, enc, error, handles.codec(),
                      &prefixes) ||
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
