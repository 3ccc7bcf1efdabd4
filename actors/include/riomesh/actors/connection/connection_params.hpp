// What one connection of a node is set up with: who this node is, how it
// proves it, and the limits it offers and enforces.
#pragma once

#include <riomesh/actors/connection/session_registry.hpp>
#include <riomesh/actors/connection/session_setup.hpp>
#include <riomesh/actors/handshake/tls_context.hpp>
#include <riomesh/actors/placement/release_batch.hpp>
#include <riomesh/actors/placement/segment_pool.hpp>
#include <riomesh/buffer.hpp>
#include <riomesh/channels/memory/memory_region.hpp>
#include <riomesh/config/settings.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace riomesh::actors {

struct connection_params {
  std::string node_name;
  // How this node proves itself and checks its peers (the secret, node
  // keys, the keyring), set up once for all its connections.
  std::shared_ptr<const tls_context> tls;
  bool allow_unauthenticated = false;
  // This side wants the rest of the stream encrypted (where the channel can).
  bool encrypt = false;
  // The node a dialed connection means to reach (empty: by address).
  std::string expected;
  // Random per start of the node, told in the session terms: how a peer
  // tells a restarted node from the one it had a session with.
  std::uint64_t incarnation = 0;
  // What actor handles from this node carry, and where it listens: told in
  // the session terms, so a peer maps handles to this node and may tell a
  // third node where to dial it.
  node_identity identity;
  // Node-wide live sessions (session_registry.hpp); null: every session is
  // granted. `dialed`: this side dialed (it does not decide).
  std::shared_ptr<session_registry> sessions;
  bool dialed = false;
  std::uint64_t arena_size = 64ull << 20;
  // Sized by demand from here up to arena_size (0, or at least arena_size:
  // fixed at arena_size).
  std::uint64_t arena_min = 0;
  std::chrono::milliseconds arena_period{1000};  // how often it may shrink
  // The node's receive pool (segment_pool.hpp); null: segments are made
  // and freed one by one.
  std::shared_ptr<segment_pool> arena_pool;
  channels::memory_source arena_memory;
  std::uint32_t max_body = 1u << 20;
  std::uint16_t max_buffers = 256;
  std::size_t max_pending = 1024;
  std::uint64_t max_streamed = 4ull << 30;  // buffers beyond the peer's arena, in all
  std::uint32_t max_streams = 8;            // and how many at once
  release_batch::limits releases;
  // Rendezvous (connection_core_rendezvous.cpp): buffers of at least
  // lend_from bytes are lent to peers that fetch them (0: never), at most
  // max_loans at once per connection. This node fetches what peers lend
  // (fetches_lent, told in its terms), up to fetch_window bytes at once,
  // into what `destination` gives for the receiving actor (null or an
  // empty buffer: a buffer of its own). `destination` runs on the I/O
  // thread.
  std::uint64_t lend_from = 0;
  std::size_t max_loans = 8;
  // Where the peer has lent buffers pushed (tcp), fewer: with two pulls in
  // flight, the memory they land in at the receiver (its buffer pool's
  // first free space) is taken again while still in its cache (1 MiB
  // one-way on loopback: 335 us of CPU per message against 370 with 8,
  // medians of 7 and 5 runs; the receiver's RSS 20 MiB against 32). Reads
  // one-sided (rdma) gained nothing from fewer in the VM (57-58 MiB/s
  // against 58-60).
  std::size_t max_pushed_loans = 2;
  bool fetches_lent = false;
  std::uint64_t fetch_window = 64ull << 20;
  std::function<buffer(const std::string& peer, std::uint64_t receiver, std::uint64_t size)>
      destination;
  // How often the channel's timers run (keepalive, peer timeout): a few
  // times per keepalive interval.
  std::chrono::milliseconds tick{250};
  // A peer that has not finished the session setup by then is no node (or
  // is a client holding the connection open): it is closed.
  std::chrono::milliseconds setup_limit{10000};
  // This node declares a silent peer lost after this (0: never), and tells
  // peers so in its terms.
  std::chrono::milliseconds peer_timeout{5000};
};

}  // namespace riomesh::actors
