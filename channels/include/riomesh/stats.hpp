// A node's counters, as runtime::stats() returns them and `riomesh stat`
// shows them: the node's, its memory domain's (rdma), and each
// connection's. Plain values; every layer below fills its own part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace riomesh {

// What moved through the node, over all peers.
struct node_counters {
  std::uint64_t messages_out = 0, messages_in = 0;
  std::uint64_t requests_out = 0, responses_in = 0;
  std::uint64_t bytes_placed_out = 0, bytes_placed_in = 0;      // buffers sent by iowrite
  std::uint64_t payload_copied_out = 0, payload_copied_in = 0;  // buffers serialized inline
  std::uint64_t direct_writes = 0;   // into peers' own maps (runtime::write)
  std::uint64_t undeliverable = 0;   // refused locally (congested, encode, not connected)
  std::uint64_t bad_inbound = 0;     // decode failures, unknown receivers, refusals
  std::uint64_t system_refused = 0;  // CAF system messages from the wire, refused
  std::uint64_t links_refused = 0;   // links to actors never handed to the peer
  std::uint64_t thens_carried = 0;   // grant `then` messages delivered from their use
  // Reads and atomics of peers' grants this node did one-sided (RDMA READ,
  // verbs atomics), and those of its own grants its I/O thread served
  // (a write of the bytes, a CPU atomic) where the connection cannot.
  std::uint64_t grants_fetched = 0, grants_served = 0;
  // Bytes moved through grants, on either side: written or read by this
  // node as a holder (out: its writes, in: its reads), and written into or
  // read from this node's own grants by their holders (in and out).
  std::uint64_t grant_bytes_out = 0, grant_bytes_in = 0;
  // Hand-offs between threads: enqueues into actors' mailboxes (deliveries,
  // responses, failure notices, link events) and pushes onto connections'
  // queues. One of each per message sent and delivered.
  std::uint64_t mailbox_enqueues = 0, connection_enqueues = 0;
  // Actors the I/O thread ran itself when its deliveries woke them, those
  // it gave to the CAF workers instead, and turns too long to run there.
  std::uint64_t io_turns = 0, io_handed = 0, io_heavy = 0;
  // The I/O thread's sleeps ended (wakes), eventfd rings from other
  // threads, and spins that found nothing: how often a message found it
  // asleep, the cost that `channel.polling_time` trades CPU against.
  std::uint64_t io_wakes = 0, io_doorbells = 0, io_spins = 0;
  std::uint64_t proxies = 0, exported = 0, published = 0;
};

// The node's memory domain (rdma): registrations and pinned bytes.
struct memory_counters {
  std::uint64_t devices = 0;            // protection domains open
  std::uint64_t registrations = 0;      // memory regions made, ever
  std::uint64_t registered = 0;         // memory regions live
  std::uint64_t pinned_bytes = 0;       // their bytes
  std::uint64_t peak_pinned_bytes = 0;  // the most at once
  std::uint64_t refused = 0;            // past a bound, or by the device
  std::uint64_t cache_hits = 0, cache_misses = 0, cache_evictions = 0, cache_trimmed = 0;
  std::uint64_t cache_entries = 0, cache_bytes = 0;
  // The devices' shared completion queues, the queue pairs on them now,
  // their polls, completions of closed connections they dropped, and
  // sleeping connections their watchers woke.
  std::uint64_t completion_queues = 0, cq_queue_pairs = 0, cq_polls = 0, cq_strays = 0,
                cq_kicks = 0;
};

// One connection.
struct connection_counters {
  std::uint64_t messages_out = 0, messages_in = 0;
  std::uint64_t bytes_placed_out = 0, bytes_placed_in = 0;
  std::uint64_t inline_bytes_out = 0, inline_bytes_in = 0;  // envelope bodies: copied
  std::uint64_t credit_stalls = 0;                          // a message waited for arena space
  std::uint64_t streamed_bytes_in = 0;  // buffers beyond the arena, assembled: copied
  std::uint64_t staged_bytes_in = 0;    // placed in host memory, copied to the device's
  std::uint64_t staged_bytes_out = 0;   // device memory sent from a host copy
  std::uint64_t direct_bytes_out = 0;   // direct writes into the peer's own maps
  std::uint64_t dropped = 0;            // queued, then dropped (a write without a map)
  // rdma: memory registered to send from.
  std::uint64_t registrations = 0, registration_hits = 0, per_write_registrations = 0;
  std::uint64_t releases_out = 0, releases_in = 0;
  std::size_t queue_depth = 0;
  // What this node exposes to the peer (riomap).
  std::uint64_t exposed_maps = 0, exposed_bytes = 0;
  // Our arena: its size and what the peer's placed buffers hold of it;
  // the peer's: what is left for our buffers (the placement credits).
  std::uint64_t arena_size = 0, arena_in_use = 0, peer_arena_free = 0;
  // Sized by demand: segments held (the one moved from, until the peer
  // left it) and times it moved, growing or shrinking.
  std::uint64_t arena_held = 0, arena_moves = 0;
  // Rendezvous: buffers lent to the peer (left in our memory for it to
  // fetch), those still lent, and the peer's we fetched, with their bytes.
  std::uint64_t buffers_lent = 0, bytes_lent = 0, loans_open = 0, buffers_fetched = 0,
                bytes_fetched = 0;
  // The session: 1 if its stream goes in TLS records (channel.encrypt),
  // 1 if the peer proved itself (the secret or its key).
  std::uint64_t encrypted = 0, authenticated = 0;
};

// One connection, as the actor it is (riomesh ls).
struct connection_info {
  std::uint64_t actor = 0;  // its actor's id on this node
  std::string peer;         // the node, once its session is up
  std::string remote;       // the address it comes from
  std::string phase;        // "setting up", "up", "draining", ...
  bool dialed = false;      // this node dialed it (else accepted it)
};

// A histogram of durations (Prometheus's shape): cumulative counts per
// upper bound, in seconds; `count` is every observation (the +Inf bucket).
struct latency_histogram {
  std::vector<double> bounds;
  std::vector<std::uint64_t> counts;
  double sum = 0;  // seconds
  std::uint64_t count = 0;
};
struct node_stats {
  node_counters node;
  // Requests to peers' actors, from send to answer (ok or error).
  latency_histogram request_latency;
  memory_counters memory;
  // The connection the node routes through, per peer.
  std::vector<std::pair<std::string, connection_counters>> peers;
  // Every connection, set up or not, routed or not.
  std::vector<connection_info> connections;
};

}  // namespace riomesh
