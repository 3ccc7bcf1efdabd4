// What publishers, the broker and subscribers say to each other:
//   publisher  -> broker      (post_atom, sample)              -> subscribers reached
//   subscriber -> broker      (subscribe_atom, topic, name)    -> subscribers of topic
//   anyone     -> broker      (subscribers_atom, topic)        -> subscribers of topic
//   broker     -> subscriber  (deliver_atom, sample)           -> seq (an ack)
// A subscriber that pulls (pull: true) subscribes with its node's name,
//   subscriber -> broker      (subscribe_atom, topic, name, node)
// and is offered each sample without its payload, with a use-once grant
// to read the payload from where the broker's node holds it:
//   broker     -> subscriber  (offer_atom, sample, grant)       -> seq (an ack)
// A publisher's last sample, once the broker had it, is also told to each
// subscriber that subscribes later (a lost subscriber back after it), so
// that it knows the stream ended and how many samples it missed:
//   broker     -> subscriber  (ended_atom, topic, publisher, run, total)
// A publisher's stream is one run of it: started again under the same
// name, it posts under a new run, and subscribers take that as a new
// stream, not as the old one's samples again.
// Acks make the flow control: a publisher keeps a window of posts open, and
// the broker answers a post when every subscriber has taken it.
#pragma once

#include <riomesh/buffer_inspect.hpp>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>

namespace pubsub {

using post_atom = caf::atom_constant<caf::atom("ps_post")>;
using subscribe_atom = caf::atom_constant<caf::atom("ps_sub")>;
using subscribers_atom = caf::atom_constant<caf::atom("ps_subs")>;
using deliver_atom = caf::atom_constant<caf::atom("ps_deliver")>;
using tick_atom = caf::atom_constant<caf::atom("ps_tick")>;
using retry_atom = caf::atom_constant<caf::atom("ps_retry")>;
using pace_atom = caf::atom_constant<caf::atom("ps_pace")>;
using offer_atom = caf::atom_constant<caf::atom("ps_offer")>;
using ended_atom = caf::atom_constant<caf::atom("ps_ended")>;

// One published message. The payload is a pool buffer: placed into the
// broker's arena, and from there into each subscriber's, without a copy.
struct sample {
  std::string topic;
  std::string publisher;
  std::uint64_t run = 0;  // the publisher's start: later runs are larger
  std::uint64_t seq = 0;
  std::uint64_t total = 0;    // how many this run sends in all
  std::uint64_t sent_ns = 0;  // system clock at the publisher: latency
  std::uint64_t checksum = 0;
  riomesh::buffer payload;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sample& x) {
  return f(caf::meta::type_name("pubsub::sample"), x.topic, x.publisher, x.run, x.seq, x.total,
           x.sent_ns, x.checksum, x.payload);
}

}  // namespace pubsub
