#include "counter_catalog.hpp"

namespace riomesh::detail {
namespace {

constexpr auto counter = metric_kind::counter;
constexpr auto gauge = metric_kind::gauge;

}  // namespace

const std::vector<metric<node_counters>>& node_metrics() {
  using N = node_counters;
  static const std::vector<metric<N>> all{
      {"messages_out", &N::messages_out, counter, "Messages sent to peers."},
      {"messages_in", &N::messages_in, counter, "Messages received from peers."},
      {"requests_out", &N::requests_out, counter, "Requests sent to peers' actors."},
      {"responses_in", &N::responses_in, counter, "Responses received from peers."},
      {"bytes_placed_out", &N::bytes_placed_out, counter,
       "Buffer bytes placed into peers' memory (no copy)."},
      {"bytes_placed_in", &N::bytes_placed_in, counter,
       "Buffer bytes peers placed into this node's memory (no copy)."},
      {"payload_copied_out", &N::payload_copied_out, counter,
       "Buffer bytes serialized inline on sending (copied)."},
      {"payload_copied_in", &N::payload_copied_in, counter,
       "Buffer bytes deserialized inline on receiving (copied)."},
      {"direct_writes", &N::direct_writes, counter, "Writes into memory peers exposed."},
      {"undeliverable", &N::undeliverable, counter,
       "Messages refused locally: congested, not encodable, or no connection."},
      {"bad_inbound", &N::bad_inbound, counter,
       "Inbound messages refused: undecodable, unknown receiver, or not allowed."},
      {"system_refused", &N::system_refused, counter, "CAF system messages from peers, refused."},
      {"links_refused", &N::links_refused, counter,
       "Links or monitors to actors never handed to the peer, refused."},
      {"thens_carried", &N::thens_carried, counter, "Messages delivered on the use of a grant."},
      {"grants_fetched", &N::grants_fetched, counter,
       "Reads and atomics of peers' grants done one-sided."},
      {"grants_served", &N::grants_served, counter,
       "Reads and atomics of this node's grants served by its I/O thread."},
      {"grant_bytes_out", &N::grant_bytes_out, counter,
       "Bytes this node wrote through peers' grants, or peers read from its own."},
      {"grant_bytes_in", &N::grant_bytes_in, counter,
       "Bytes this node read through peers' grants, or peers wrote into its own."},
      {"mailbox_enqueues", &N::mailbox_enqueues, counter, "Enqueues into actors' mailboxes."},
      {"connection_enqueues", &N::connection_enqueues, counter,
       "Messages enqueued into connection actors."},
      {"io_turns", &N::io_turns, counter, "Actor turns run on the I/O thread."},
      {"io_handed", &N::io_handed, counter, "Actors the I/O thread handed to CAF's workers."},
      {"io_heavy", &N::io_heavy, counter, "Actor turns too long to run on the I/O thread."},
      {"io_wakes", &N::io_wakes, counter, "Times the I/O thread woke from sleep."},
      {"io_doorbells", &N::io_doorbells, counter, "Doorbells rung to wake the I/O thread."},
      {"io_spins", &N::io_spins, counter, "Busy-poll rounds of the I/O thread that found nothing."},
      {"proxies", &N::proxies, gauge, "Proxies of peers' actors held."},
      {"exported", &N::exported, gauge, "Local actors peers hold handles to."},
      {"published", &N::published, gauge, "Actors published by name."},
  };
  return all;
}

const std::vector<metric<memory_counters>>& memory_metrics() {
  using M = memory_counters;
  static const std::vector<metric<M>> all{
      {"devices", &M::devices, gauge, "RDMA protection domains open."},
      {"registrations", &M::registrations, counter, "Memory regions registered."},
      {"registered", &M::registered, gauge, "Memory regions registered now."},
      {"pinned_bytes", &M::pinned_bytes, gauge, "Bytes pinned by registrations now."},
      {"peak_pinned_bytes", &M::peak_pinned_bytes, gauge, "The most bytes pinned at once."},
      {"refused", &M::refused, counter, "Registrations refused (a bound, or the device)."},
      {"cache_hits", &M::cache_hits, counter, "Send registrations found in the cache."},
      {"cache_misses", &M::cache_misses, counter, "Send registrations not in the cache."},
      {"cache_evictions", &M::cache_evictions, counter, "Registrations evicted from the cache."},
      {"cache_trimmed", &M::cache_trimmed, counter, "Idle registrations given back."},
      {"cache_entries", &M::cache_entries, gauge, "Registrations in the cache."},
      {"cache_bytes", &M::cache_bytes, gauge, "Bytes of the registrations in the cache."},
      {"completion_queues", &M::completion_queues, gauge, "Shared completion queues."},
      {"cq_queue_pairs", &M::cq_queue_pairs, gauge, "Queue pairs on shared completion queues."},
      {"cq_polls", &M::cq_polls, counter, "Polls of the shared completion queues."},
      {"cq_strays", &M::cq_strays, counter, "Completions of closed connections, dropped."},
      {"cq_kicks", &M::cq_kicks, counter, "Sleeping connections woken by completions."},
  };
  return all;
}

const std::vector<metric<connection_counters>>& connection_metrics() {
  using C = connection_counters;
  static const std::vector<metric<C>> all{
      {"messages_out", &C::messages_out, counter, "Messages sent to the peer."},
      {"messages_in", &C::messages_in, counter, "Messages received from the peer."},
      {"bytes_placed_out", &C::bytes_placed_out, counter,
       "Buffer bytes placed into the peer's arena."},
      {"bytes_placed_in", &C::bytes_placed_in, counter,
       "Buffer bytes the peer placed into this node's arena."},
      {"inline_bytes_out", &C::inline_bytes_out, counter, "Envelope body bytes sent (copied)."},
      {"inline_bytes_in", &C::inline_bytes_in, counter, "Envelope body bytes received (copied)."},
      {"streamed_bytes_in", &C::streamed_bytes_in, counter,
       "Bytes of buffers larger than the arena, assembled (copied)."},
      {"staged_bytes_in", &C::staged_bytes_in, counter,
       "Bytes placed in host memory and copied to device memory."},
      {"staged_bytes_out", &C::staged_bytes_out, counter,
       "Device memory bytes sent from a host copy."},
      {"direct_bytes_out", &C::direct_bytes_out, counter,
       "Bytes written into memory the peer exposed."},
      {"credit_stalls", &C::credit_stalls, counter, "Messages that waited for arena space."},
      {"queue_depth", &C::queue_depth, gauge, "Messages waiting to go to the peer."},
      {"exposed_maps", &C::exposed_maps, gauge, "Memory maps exposed to the peer."},
      {"exposed_bytes", &C::exposed_bytes, gauge, "Bytes exposed to the peer."},
      {"dropped", &C::dropped, counter, "Queued writes dropped (no map at the peer)."},
      {"arena_in_use", &C::arena_in_use, gauge,
       "Bytes of this node's arena held by the peer's placed buffers."},
      {"arena_size", &C::arena_size, gauge, "Bytes of the receive arena for the peer."},
      {"peer_arena_free", &C::peer_arena_free, gauge,
       "Bytes free in the peer's arena for this node's buffers."},
      {"arena_held", &C::arena_held, gauge,
       "Bytes of receive arena held for the peer, a segment being left included."},
      {"arena_moves", &C::arena_moves, counter,
       "Times the receive arena for the peer grew or shrank."},
      {"buffers_lent", &C::buffers_lent, counter,
       "Buffers left in this node's memory for the peer to fetch (rendezvous)."},
      {"bytes_lent", &C::bytes_lent, counter, "Bytes of the buffers lent to the peer."},
      {"loans_open", &C::loans_open, gauge, "Lent buffers the peer has not fetched yet."},
      {"buffers_fetched", &C::buffers_fetched, counter,
       "Buffers the peer lent that this node fetched (rendezvous)."},
      {"bytes_fetched", &C::bytes_fetched, counter, "Bytes of the peer's lent buffers fetched."},
      {"registrations", &C::registrations, counter, "Send registrations made (rdma)."},
      {"registration_hits", &C::registration_hits, counter, "Send registrations reused (rdma)."},
      {"per_write_registrations", &C::per_write_registrations, counter,
       "Registrations made for one write (rdma)."},
      {"encrypted", &C::encrypted, gauge, "1 if the stream goes in TLS records."},
      {"authenticated", &C::authenticated, gauge, "1 if the peer proved its name."},
  };
  return all;
}

}  // namespace riomesh::detail
